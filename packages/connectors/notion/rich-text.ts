/**
 * Notion rich text (segments with annotations, <= 2000 characters each, <= 100 per value) <->
 * canonical Markdown. Reading serialises segments to Markdown and normalises it with the engine's
 * printer; writing renders Markdown to HTML with the engine's helper and walks the inline HTML back
 * into segments. Underline and colours have no Markdown form and are dropped.
 */
import { markdownToHtml, normalizeMarkdown } from '@lockstep/engine';

export const NOTION_TEXT_MAX = 2000;
export const NOTION_SEGMENTS_MAX = 100;

export type NotionAnnotations = {
  bold?: boolean;
  italic?: boolean;
  strikethrough?: boolean;
  underline?: boolean;
  code?: boolean;
  color?: string;
};

/** A rich text object as Notion returns it (only the parts read here). */
export type NotionRichText = {
  type?: string;
  plain_text: string;
  href?: string | null;
  annotations?: NotionAnnotations;
  text?: { content: string; link?: { url: string } | null };
};

/** A rich text object as written. */
export type NotionRichTextInput = {
  type: 'text';
  text: { content: string; link: { url: string } | null };
  annotations: { bold: boolean; italic: boolean; strikethrough: boolean; code: boolean };
};

type Run = {
  text: string;
  bold: boolean;
  italic: boolean;
  strike: boolean;
  code: boolean;
  href: string | null;
};

const sameStyle = (a: Run, b: Run) =>
  a.bold === b.bold &&
  a.italic === b.italic &&
  a.strike === b.strike &&
  a.code === b.code &&
  a.href === b.href;

function mergeRuns(runs: Run[]): Run[] {
  const out: Run[] = [];
  for (const r of runs) {
    if (r.text === '') continue;
    const last = out[out.length - 1];
    if (last && sameStyle(last, r)) last.text += r.text;
    else out.push({ ...r });
  }
  return out;
}

/** Characters that would change an inline run's meaning in Markdown. */
function escapeInline(text: string): string {
  return text.replace(/[\\`*_[\]~<&]/g, (c) => `\\${c}`);
}

function wrap(run: Run, text: string): string {
  if (text === '') return '';
  // Emphasis markers must touch the text: keep flanking spaces outside them.
  const lead = /^\s*/.exec(text)?.[0] ?? '';
  const trail = /\s*$/.exec(text.slice(lead.length))?.[0] ?? '';
  const core = text.slice(lead.length, text.length - trail.length);
  if (core === '') return text;
  let md: string;
  if (run.code) {
    const fence = core.includes('`') ? '``' : '`';
    md = fence === '``' ? `\`\` ${core} \`\`` : `\`${core}\``;
  } else md = escapeInline(core);
  if (run.strike) md = `~~${md}~~`;
  if (run.italic) md = `_${md}_`;
  if (run.bold) md = `**${md}**`;
  if (run.href) md = `[${md}](<${run.href.replace(/[<>]/g, encodeURIComponent)}>)`;
  return `${lead}${md}${trail}`;
}

/** Notion rich text -> canonical Markdown (null when empty). */
export function richTextToMarkdown(segments: readonly NotionRichText[]): string | null {
  const runs = mergeRuns(
    segments.map((s) => ({
      text: s.plain_text ?? s.text?.content ?? '',
      bold: s.annotations?.bold === true,
      italic: s.annotations?.italic === true,
      strike: s.annotations?.strikethrough === true,
      code: s.annotations?.code === true,
      href: s.href ?? s.text?.link?.url ?? null,
    })),
  );
  let md = '';
  for (const run of runs) {
    // Line breaks split a run: a blank line is a paragraph, a single newline a hard break.
    const lines = run.text.replace(/\r\n?/g, '\n').split('\n');
    lines.forEach((line, i) => {
      if (i > 0) md += '\n';
      md += wrap(run, line);
    });
  }
  // A single newline is a hard break, unless the next line starts a block (a list item, a heading).
  const withBreaks = md.replace(/([^\n])\n(?=([^\n]*))/g, (m, before: string, next: string) =>
    next === '' || BLOCK_START.test(next) ? m : `${before}\\\n`,
  );
  const normalized = normalizeMarkdown(withBreaks);
  return normalized === '' ? null : normalized;
}

const BLOCK_START = /^\s*([-*+]\s|\d+[.)]\s|#{1,6}\s|>)/;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#')
      return String.fromCodePoint(
        e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10),
      );
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

const BLOCKS = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'li',
  'pre',
  'blockquote',
  'tr',
  'hr',
  'table',
]);

/**
 * Canonical Markdown -> Notion rich text: inline marks become annotations and links, blocks become
 * lines (lists keep their `- ` / `1. ` markers, headings their `#`), text is cut at 2000 characters.
 * Throws when more than 100 segments would be needed.
 */
export function markdownToRichText(markdown: string | null): NotionRichTextInput[] {
  if (markdown === null || markdown.trim() === '') return [];
  const html = markdownToHtml(markdown);
  const runs: Run[] = [];
  const style = { bold: 0, italic: 0, strike: 0, code: 0 };
  const links: (string | null)[] = [];
  const lists: { ordered: boolean; n: number }[] = [];
  let inPre = 0;
  let pendingBreak = '';
  let started = false;
  const push = (text: string) => {
    if (text === '') return;
    if (started && pendingBreak) runs.push(plainRun(pendingBreak));
    pendingBreak = '';
    started = true;
    runs.push({
      text,
      bold: style.bold > 0,
      italic: style.italic > 0,
      strike: style.strike > 0,
      code: style.code > 0 || inPre > 0,
      href: links.findLast((l) => l !== null) ?? null,
    });
  };
  const tokens = html.matchAll(/<(\/?)([a-zA-Z0-9]+)([^>]*)>|([^<]+)/g);
  for (const t of tokens) {
    const [, closing, rawTag, attrs, text] = t;
    if (text !== undefined) {
      // Whitespace between blocks is layout, not content.
      if (inPre === 0 && /^\s*$/.test(text) && text.includes('\n')) continue;
      push(decodeEntities(inPre > 0 ? text.replace(/\n$/, '') : text));
      continue;
    }
    const tag = (rawTag ?? '').toLowerCase();
    const open = closing !== '/';
    if (tag === 'strong' || tag === 'b') style.bold += open ? 1 : -1;
    else if (tag === 'em' || tag === 'i') style.italic += open ? 1 : -1;
    else if (tag === 'del' || tag === 's') style.strike += open ? 1 : -1;
    else if (tag === 'code') style.code += open ? 1 : -1;
    else if (tag === 'a') {
      if (open) links.push(decodeEntities(/href="([^"]*)"/.exec(attrs ?? '')?.[1] ?? '') || null);
      else links.pop();
    } else if (tag === 'br') {
      if (started) pendingBreak += '\n';
    } else if (tag === 'ul' || tag === 'ol') {
      if (open) lists.push({ ordered: tag === 'ol', n: Number(/start="(\d+)"/.exec(attrs ?? '')?.[1] ?? 1) });
      else lists.pop();
    } else if (tag === 'img') {
      push(decodeEntities(/alt="([^"]*)"/.exec(attrs ?? '')?.[1] ?? ''));
    } else if (BLOCKS.has(tag) && open) {
      if (tag === 'pre') inPre++;
      const list = lists[lists.length - 1];
      const inList = tag === 'li' || (tag === 'p' && list !== undefined);
      if (started) pendingBreak = pendingBreak.length >= 2 ? pendingBreak : inList ? '\n' : '\n\n';
      if (tag === 'li' && list) {
        const marker = list.ordered ? `${list.n++}. ` : '- ';
        const indent = '  '.repeat(lists.length - 1);
        runs.push(plainRun(`${started ? pendingBreak : ''}${indent}${marker}`));
        pendingBreak = '';
        started = true;
      } else if (/^h[1-6]$/.test(tag)) {
        runs.push(plainRun(`${started ? pendingBreak : ''}${'#'.repeat(Number(tag[1]))} `));
        pendingBreak = '';
        started = true;
      } else if (tag === 'blockquote') {
        runs.push(plainRun(`${started ? pendingBreak : ''}> `));
        pendingBreak = '';
        started = true;
      } else if (tag === 'hr') {
        runs.push(plainRun(`${started ? pendingBreak : ''}---`));
        pendingBreak = '';
        started = true;
      }
    } else if (tag === 'pre' && !open) inPre--;
  }
  const merged = mergeRuns(runs);
  const out: NotionRichTextInput[] = [];
  for (const run of merged) {
    for (let i = 0; i < run.text.length; i += NOTION_TEXT_MAX) {
      const content = run.text.slice(i, i + NOTION_TEXT_MAX);
      out.push({
        type: 'text',
        text: { content, link: run.href ? { url: run.href } : null },
        annotations: { bold: run.bold, italic: run.italic, strikethrough: run.strike, code: run.code },
      });
    }
  }
  if (out.length > NOTION_SEGMENTS_MAX)
    throw new RangeError(
      `needs ${out.length} rich text segments; Notion accepts at most ${NOTION_SEGMENTS_MAX}`,
    );
  return out;
}

function plainRun(text: string): Run {
  return { text, bold: false, italic: false, strike: false, code: false, href: null };
}

/** Plain text -> rich text segments of at most 2000 characters (for titles). */
export function plainToRichText(text: string | null): NotionRichTextInput[] {
  if (text === null || text === '') return [];
  const out: NotionRichTextInput[] = [];
  for (let i = 0; i < text.length; i += NOTION_TEXT_MAX) {
    out.push({
      type: 'text',
      text: { content: text.slice(i, i + NOTION_TEXT_MAX), link: null },
      annotations: { bold: false, italic: false, strikethrough: false, code: false },
    });
  }
  if (out.length > NOTION_SEGMENTS_MAX)
    throw new RangeError(
      `needs ${out.length} rich text segments; Notion accepts at most ${NOTION_SEGMENTS_MAX}`,
    );
  return out;
}
