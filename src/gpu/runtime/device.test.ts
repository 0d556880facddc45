import { describe, expect, it } from 'vitest';
import { adapterLine, summarize } from './device';

describe('adapter summary', () => {
  it('recognises SwiftShader as a software adapter and prints vendor / architecture', () => {
    const info = summarize({ vendor: 'google', architecture: 'swiftshader', device: '', description: '' } as GPUAdapterInfo);
    expect(info.isSoftware).toBe(true);
    expect(adapterLine(info)).toBe('google / swiftshader');
  });
  it('treats a discrete GPU as hardware', () => {
    const info = summarize({ vendor: 'nvidia', architecture: 'hopper', device: '', description: 'NVIDIA H200' } as GPUAdapterInfo);
    expect(info.isSoftware).toBe(false);
    expect(adapterLine(info)).toBe('nvidia / hopper');
  });
});
