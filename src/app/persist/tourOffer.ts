// Whether this browser has dismissed (or taken) the first-visit offer of the tour: one flag in
// localStorage, read synchronously so the offer never flashes. Storage that refuses (private modes)
// just means the offer shows again next time.
const KEY = 'mw.tour-offer';

export function tourOfferDismissed(): boolean {
  try {
    return localStorage.getItem(KEY) === 'dismissed';
  } catch {
    return false;
  }
}

export function dismissTourOffer(): void {
  try {
    localStorage.setItem(KEY, 'dismissed');
  } catch {
    // nothing to remember it in
  }
}
