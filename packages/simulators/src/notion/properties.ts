/**
 * Notion property schemas and values: validation of written values (with Notion's size limits and
 * error wording where it is known), rich text objects, and rendering of stored values as the API
 * returns them. Built from developers.notion.com (Page properties, Data source properties, Rich text,
 * Request limits).
 */

// ---------------------------------------------------------------------------------------------
// Limits (Request limits page)

export const RICH_TEXT_CONTENT_MAX = 2000;
export const RICH_TEXT_LINK_MAX = 2000;
export const EQUATION_MAX = 1000;
export const RICH_TEXT_ARRAY_MAX = 100;
export const URL_MAX = 2000;
export const EMAIL_MAX = 200;
export const PHONE_MAX = 200;
export const MULTI_SELECT_MAX = 100;
export const RELATION_MAX = 100;
export const PEOPLE_MAX = 100;
/** Page objects list at most 25 references of a relation or people property (then `has_more`). */
export const PAGE_REFERENCE_LIMIT = 25;

export const COLORS = [
  'default',
  'gray',
  'brown',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
  'red',
] as const;
const TEXT_COLORS = new Set<string>([...COLORS, ...COLORS.slice(1).map((c) => `${c}_background`)]);

// ---------------------------------------------------------------------------------------------
// Errors

export class NotionApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly additionalData?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const validationError = (message: string) => new NotionApiError(400, 'validation_error', message);

/** Notion's schema-validation wording: `body failed validation: body.x should be ..., instead was ...`. */
export const bodyFailed = (path: string, expected: string, actual: unknown) =>
  validationError(`body failed validation: ${path} should be ${expected}, instead was \`${show(actual)}\`.`);

export function show(v: unknown): string {
  if (v === undefined) return 'undefined';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

// ---------------------------------------------------------------------------------------------
// Rich text

export type Annotations = {
  bold: boolean;
  italic: boolean;
  strikethrough: boolean;
  underline: boolean;
  code: boolean;
  color: string;
};

export type RichText = {
  type: 'text' | 'equation' | 'mention';
  text?: { content: string; link: { url: string } | null };
  equation?: { expression: string };
  mention?: Record<string, unknown>;
  annotations: Annotations;
  plain_text: string;
  href: string | null;
};

export const DEFAULT_ANNOTATIONS: Annotations = {
  bold: false,
  italic: false,
  strikethrough: false,
  underline: false,
  code: false,
  color: 'default',
};

export function plainRichText(content: string): RichText[] {
  if (content === '') return [];
  const out: RichText[] = [];
  for (let i = 0; i < content.length; i += RICH_TEXT_CONTENT_MAX) {
    const part = content.slice(i, i + RICH_TEXT_CONTENT_MAX);
    out.push({
      type: 'text',
      text: { content: part, link: null },
      annotations: { ...DEFAULT_ANNOTATIONS },
      plain_text: part,
      href: null,
    });
  }
  return out;
}

export function richTextPlain(rt: RichText[]): string {
  return rt.map((r) => r.plain_text).join('');
}

type Lookups = {
  userName(id: string): string | undefined;
  pageTitle(id: string): string | undefined;
};

/** Validates a rich text array from a request and fills in defaults (annotations, plain_text, href). */
export function parseRichText(raw: unknown, path: string, lookups: Lookups): RichText[] {
  if (!Array.isArray(raw)) throw bodyFailed(path, 'an array', raw);
  if (raw.length > RICH_TEXT_ARRAY_MAX)
    throw validationError(
      `body failed validation: ${path}.length should be ≤ \`${RICH_TEXT_ARRAY_MAX}\`, instead was \`${raw.length}\`.`,
    );
  return raw.map((item, i) => parseRichTextItem(item, `${path}[${i}]`, lookups));
}

function parseRichTextItem(item: unknown, path: string, lookups: Lookups): RichText {
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    throw bodyFailed(path, 'an object', item);
  const o = item as Record<string, unknown>;
  const annotations = parseAnnotations(o.annotations, `${path}.annotations`);
  const type =
    (o.type as string | undefined) ??
    (o.text ? 'text' : o.equation ? 'equation' : o.mention ? 'mention' : undefined);
  if (type === 'text') {
    const text = o.text as { content?: unknown; link?: unknown } | undefined;
    if (typeof text !== 'object' || text === null) throw bodyFailed(`${path}.text`, 'defined', text);
    if (typeof text.content !== 'string') throw bodyFailed(`${path}.text.content`, 'a string', text.content);
    if (text.content.length > RICH_TEXT_CONTENT_MAX)
      throw validationError(
        `body failed validation: ${path}.text.content.length should be ≤ \`${RICH_TEXT_CONTENT_MAX}\`, instead was \`${text.content.length}\`.`,
      );
    let link: { url: string } | null = null;
    if (text.link !== undefined && text.link !== null) {
      const url = (text.link as { url?: unknown }).url;
      if (typeof url !== 'string') throw bodyFailed(`${path}.text.link.url`, 'a string', url);
      if (url.length > RICH_TEXT_LINK_MAX)
        throw validationError(
          `body failed validation: ${path}.text.link.url.length should be ≤ \`${RICH_TEXT_LINK_MAX}\`, instead was \`${url.length}\`.`,
        );
      if (!isUrl(url)) throw validationError(`Invalid URL for link: ${url}`);
      link = { url };
    }
    return {
      type: 'text',
      text: { content: text.content, link },
      annotations,
      plain_text: text.content,
      href: link?.url ?? null,
    };
  }
  if (type === 'equation') {
    const expression = (o.equation as { expression?: unknown } | undefined)?.expression;
    if (typeof expression !== 'string')
      throw bodyFailed(`${path}.equation.expression`, 'a string', expression);
    if (expression.length > EQUATION_MAX)
      throw validationError(
        `body failed validation: ${path}.equation.expression.length should be ≤ \`${EQUATION_MAX}\`, instead was \`${expression.length}\`.`,
      );
    return { type: 'equation', equation: { expression }, annotations, plain_text: expression, href: null };
  }
  if (type === 'mention') {
    const m = o.mention as Record<string, unknown> | undefined;
    if (typeof m !== 'object' || m === null) throw bodyFailed(`${path}.mention`, 'an object', m);
    if (m.user) {
      const id = (m.user as { id?: unknown }).id;
      const name = typeof id === 'string' ? lookups.userName(id) : undefined;
      if (name === undefined) throw validationError(`Could not find user with ID: ${String(id)}.`);
      return {
        type: 'mention',
        mention: { type: 'user', user: { object: 'user', id } },
        annotations,
        plain_text: `@${name}`,
        href: null,
      };
    }
    if (m.page) {
      const id = (m.page as { id?: unknown }).id;
      const title = typeof id === 'string' ? lookups.pageTitle(id) : undefined;
      if (title === undefined) throw validationError(`Could not find page with ID: ${String(id)}.`);
      return {
        type: 'mention',
        mention: { type: 'page', page: { id } },
        annotations,
        plain_text: title,
        href: `https://www.notion.so/${String(id).replaceAll('-', '')}`,
      };
    }
    if (m.date) {
      const date = parseDateValue(m.date, `${path}.mention.date`);
      if (!date) throw bodyFailed(`${path}.mention.date`, 'an object', m.date);
      return {
        type: 'mention',
        mention: { type: 'date', date },
        annotations,
        plain_text: date.end ? `${date.start} → ${date.end}` : date.start,
        href: null,
      };
    }
    throw validationError(`body failed validation: ${path}.mention should be a user, page or date mention.`);
  }
  throw validationError(
    `body failed validation. Fix one: ${path}.text should be defined, instead was \`undefined\`. ${path}.mention should be defined, instead was \`undefined\`. ${path}.equation should be defined, instead was \`undefined\`.`,
  );
}

function parseAnnotations(raw: unknown, path: string): Annotations {
  if (raw === undefined || raw === null) return { ...DEFAULT_ANNOTATIONS };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bodyFailed(path, 'an object', raw);
  const a = raw as Record<string, unknown>;
  const out: Annotations = { ...DEFAULT_ANNOTATIONS };
  for (const key of ['bold', 'italic', 'strikethrough', 'underline', 'code'] as const) {
    if (a[key] === undefined) continue;
    if (typeof a[key] !== 'boolean') throw bodyFailed(`${path}.${key}`, 'a boolean', a[key]);
    out[key] = a[key] as boolean;
  }
  if (a.color !== undefined) {
    if (typeof a.color !== 'string' || !TEXT_COLORS.has(a.color))
      throw bodyFailed(
        `${path}.color`,
        `one of ${[...TEXT_COLORS].map((c) => `\`"${c}"\``).join(', ')}`,
        a.color,
      );
    out.color = a.color;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schemas

export type PropertyType =
  | 'title'
  | 'rich_text'
  | 'number'
  | 'select'
  | 'multi_select'
  | 'status'
  | 'date'
  | 'checkbox'
  | 'url'
  | 'email'
  | 'phone_number'
  | 'people'
  | 'relation'
  | 'formula'
  | 'rollup'
  | 'created_time'
  | 'last_edited_time'
  | 'created_by'
  | 'last_edited_by'
  | 'unique_id'
  | 'files';

export const READ_ONLY_TYPES = new Set<PropertyType>([
  'formula',
  'rollup',
  'created_time',
  'last_edited_time',
  'created_by',
  'last_edited_by',
  'unique_id',
]);

export type SelectOption = { id: string; name: string; color: string; description: string | null };
export type StatusGroup = { id: string; name: string; color: string; option_ids: string[] };

export type FormulaResult =
  | { type: 'string'; string: string | null }
  | { type: 'number'; number: number | null }
  | { type: 'boolean'; boolean: boolean }
  | { type: 'date'; date: DateValue | null };

export type PropertySchema = {
  id: string;
  name: string;
  type: PropertyType;
  description?: string;
  /** select, multi_select, status */
  options?: SelectOption[];
  groups?: StatusGroup[];
  number?: { format: string };
  /** relation: the target data source and the synced (dual) property on it, if any. */
  relation?: { dataSourceId: string; databaseId: string; dualPropertyId?: string };
  /** formula: the expression as shown, and how the simulator computes it. */
  formula?: { expression: string; compute: (read: (propertyName: string) => unknown) => FormulaResult };
  /** rollup over a relation property of the same data source (the simulator supports `count`). */
  rollup?: { relationPropertyId: string; function: 'count' };
  uniqueId?: { prefix: string | null };
};

export type DateValue = { start: string; end: string | null; time_zone: string | null };

/** One value as stored (the inner value of a property value object). */
export type StoredValue = RichText[] | number | boolean | string | string[] | DateValue | FileValue[] | null;

export type FileValue = { name: string; type: 'external'; external: { url: string } };

export function isUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:';
  } catch {
    return false;
  }
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/;

export function parseDateValue(raw: unknown, path: string): DateValue | null {
  if (raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bodyFailed(path, 'an object or `null`', raw);
  const d = raw as { start?: unknown; end?: unknown; time_zone?: unknown };
  const check = (v: unknown, p: string): string => {
    if (typeof v !== 'string' || !(DATE_RE.test(v) || DATETIME_RE.test(v)) || Number.isNaN(Date.parse(v)))
      throw validationError(
        `body failed validation: ${p} should be a valid ISO 8601 date string, instead was \`${show(v)}\`.`,
      );
    return v;
  };
  const start = check(d.start, `${path}.start`);
  const end = d.end === undefined || d.end === null ? null : check(d.end, `${path}.end`);
  if (end !== null && Date.parse(end) < Date.parse(start))
    throw validationError(`body failed validation: ${path}.end should be after ${path}.start.`);
  const timeZone = d.time_zone === undefined || d.time_zone === null ? null : String(d.time_zone);
  return {
    start: normalizeDateString(start),
    end: end === null ? null : normalizeDateString(end),
    time_zone: timeZone,
  };
}

/** Datetimes with an offset come back in UTC as `...000+00:00`; dates and local times as given. */
function normalizeDateString(v: string): string {
  if (DATE_RE.test(v)) return v;
  const hasZone = /(Z|[+-]\d{2}:\d{2})$/.test(v);
  if (!hasZone) return v.length === 16 ? `${v}:00.000` : v.includes('.') ? v : `${v}.000`;
  return new Date(v).toISOString().replace('Z', '+00:00');
}
