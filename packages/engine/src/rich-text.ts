import { marked } from 'marked';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkStringify from 'remark-stringify';
import TurndownService from 'turndown';
import { unified } from 'unified';

/**
 * Rich text is Markdown in canonical form. Apps speak HTML or their own segments; connectors convert
 * through these functions, and normalising through one Markdown printer makes `*a*` and `_a_` equal.
 */
const markdown = unified().use(remarkParse).use(remarkGfm).use(remarkStringify, {
  bullet: '-',
  emphasis: '_',
  strong: '*',
  fence: '`',
  rule: '-',
  listItemIndent: 'one',
});

const turndown = new TurndownService({
  headingStyle: 'atx',
  bulletListMarker: '-',
  codeBlockStyle: 'fenced',
  emDelimiter: '_',
});

export function normalizeMarkdown(md: string): string {
  return String(markdown.processSync(md)).trim();
}

export function markdownFromHtml(html: string): string {
  return normalizeMarkdown(turndown.turndown(html));
}

export function markdownToHtml(md: string): string {
  return (marked.parse(md, { async: false, gfm: true }) as string).trim();
}

type MdNode = { type: string; value?: string; children?: MdNode[] };

/** The plain text of a Markdown document (for mapping rich text to a text field). */
export function markdownToPlainText(md: string): string {
  const tree = markdown.parse(md) as MdNode;
  const blocks: string[] = [];
  const walk = (node: MdNode, out: string[]) => {
    if (node.type === 'text' || node.type === 'inlineCode' || node.type === 'code')
      out.push(node.value ?? '');
    if (node.type === 'break') out.push('\n');
    for (const child of node.children ?? []) walk(child, out);
  };
  for (const block of tree.children ?? []) {
    const out: string[] = [];
    walk(block, out);
    blocks.push(out.join(''));
  }
  return blocks.join('\n').trim();
}
