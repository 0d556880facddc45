// Renders marked's tokens (docs/glossary.md, tour captions) as React: `#anchor` links become glossary
// <Term>s, web links open in a new tab, and links to the repository's files (which the page cannot
// open) stay text naming the file.
import type { Token, Tokens } from 'marked';
import { Lexer } from 'marked';
import type { ReactNode } from 'react';
import { useWorkbench } from '../store';
import { docPath } from './docs';
import { repositoryPath } from './glossary';
import { Term } from './Term';
import { glossaryEntry } from './terms';

/** A reference to a section of another doc: opens it in the glossary panel. */
function DocLink({ href, children }: { href: string; children: ReactNode }) {
  const openDoc = useWorkbench((s) => s.openDoc);
  return (
    <a
      className="doc-link"
      href={`#${href}`}
      data-doc={href}
      title={`Open ${repositoryPath(href)} here`}
      onClick={(e) => {
        e.preventDefault();
        e.stopPropagation();
        openDoc(href);
      }}
    >
      {children}
    </a>
  );
}

export function Inline({ tokens }: { tokens: readonly Token[] }): ReactNode {
  return tokens.map((t, i) => <InlineToken key={i} token={t} />);
}

function InlineToken({ token }: { token: Token }): ReactNode {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens ? <Inline tokens={t.tokens} /> : t.text;
    }
    case 'escape':
      return (token as Tokens.Escape).text;
    case 'strong':
      return (
        <strong>
          <Inline tokens={(token as Tokens.Strong).tokens} />
        </strong>
      );
    case 'em':
      return (
        <em>
          <Inline tokens={(token as Tokens.Em).tokens} />
        </em>
      );
    case 'codespan':
      return <code>{(token as Tokens.Codespan).text}</code>;
    case 'br':
      return <br />;
    case 'link': {
      const link = token as Tokens.Link;
      const body = <Inline tokens={link.tokens} />;
      if (link.href.startsWith('#')) return glossaryEntry(link.href.slice(1)) ? <Term id={link.href.slice(1)}>{body}</Term> : body;
      if (/^https?:/.test(link.href))
        return (
          <a href={link.href} target="_blank" rel="noreferrer">
            {body}
          </a>
        );
      if (docPath(link.href) !== null) return <DocLink href={link.href}>{body}</DocLink>;
      return (
        <span className="doc-ref" title={`${repositoryPath(link.href)} in the repository`}>
          {body}
        </span>
      );
    }
    default:
      return 'raw' in token ? (token as Tokens.Generic).raw : null;
  }
}

export function Blocks({ tokens }: { tokens: readonly Token[] }): ReactNode {
  return tokens.map((t, i) => <Block key={i} token={t} />);
}

function Block({ token }: { token: Token }): ReactNode {
  switch (token.type) {
    case 'paragraph':
      return (
        <p>
          <Inline tokens={(token as Tokens.Paragraph).tokens} />
        </p>
      );
    case 'table': {
      const table = token as Tokens.Table;
      return (
        <table className="md-table">
          <thead>
            <tr>
              {table.header.map((cell, i) => (
                <th key={i}>
                  <Inline tokens={cell.tokens} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row, r) => (
              <tr key={r}>
                {row.map((cell, i) => (
                  <td key={i}>
                    <Inline tokens={cell.tokens} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    }
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map((item, i) => (
        <li key={i}>
          <Blocks tokens={item.tokens} />
        </li>
      ));
      return list.ordered ? <ol>{items}</ol> : <ul>{items}</ul>;
    }
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens ? <Inline tokens={t.tokens} /> : t.text;
    }
    case 'space':
    case 'hr':
      return null;
    case 'heading': {
      const h = token as Tokens.Heading;
      return (
        <h4 className={`md-h${h.depth}`}>
          <Inline tokens={h.tokens} />
        </h4>
      );
    }
    case 'code':
      return <pre className="md-code">{(token as Tokens.Code).text}</pre>;
    case 'blockquote':
      return (
        <blockquote>
          <Blocks tokens={(token as Tokens.Blockquote).tokens} />
        </blockquote>
      );
    default:
      return 'text' in token ? <p>{(token as Tokens.Generic).text}</p> : null;
  }
}

/** One paragraph of Markdown (a caption) as inline content. */
export function MarkdownLine({ text }: { text: string }) {
  return <Inline tokens={Lexer.lexInline(text)} />;
}
