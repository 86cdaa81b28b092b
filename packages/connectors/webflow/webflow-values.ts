/**
 * Webflow CMS fields as canonical fields, and item values both ways. A field's remote id is its slug
 * (the key of an item's `fieldData`); the item's own timestamps are read-only fields whose ids hold
 * an upper-case letter, which no field slug can.
 *
 * - PlainText, Color -> text; Email -> email; Phone -> phone; Link, VideoLink -> url;
 * - RichText -> rich_text (HTML through the engine's Markdown conversion);
 * - Number -> number; Switch -> boolean; DateTime -> datetime;
 * - Option -> single_select (Webflow stores the option's id; Lockstep shows its name);
 * - Reference, MultiReference -> relations to the referenced collection's table (item ids);
 * - Image, MultiImage, File -> attachments (url; the image's alt text travels as the attachment's
 *   file name, the canonical attachment having no alt: a name that is only the URL's last segment
 *   writes no alt);
 * - createdOn, lastUpdated, lastPublished -> read-only datetimes.
 */
import {
  type Attachment,
  type FieldType as CanonicalFieldType,
  type CanonicalValue,
  markdownFromHtml,
  markdownToHtml,
  normalizeValue,
} from '@lockstep/engine';

export type WebflowFieldType =
  | 'PlainText'
  | 'RichText'
  | 'Image'
  | 'MultiImage'
  | 'VideoLink'
  | 'Link'
  | 'Email'
  | 'Phone'
  | 'Number'
  | 'DateTime'
  | 'Switch'
  | 'Color'
  | 'Option'
  | 'File'
  | 'Reference'
  | 'MultiReference'
  | (string & {});

export type WebflowOption = { id: string; name: string };

export type WebflowField = {
  id: string;
  slug: string;
  displayName: string;
  type: WebflowFieldType;
  isRequired?: boolean;
  isEditable?: boolean;
  helpText?: string | null;
  validations?: {
    options?: WebflowOption[];
    collectionId?: string;
    [key: string]: unknown;
  } | null;
  metadata?: { collectionId?: string; options?: WebflowOption[]; [key: string]: unknown } | null;
};

export type WebflowCollection = {
  id: string;
  displayName: string;
  singularName?: string;
  slug?: string;
  createdOn?: string;
  lastUpdated?: string;
  fields: WebflowField[];
};

export type WebflowImage = { fileId?: string | null; url?: string | null; alt?: string | null };

/** The item's own timestamps, offered as read-only fields. */
export const ITEM_TIMES = {
  createdOn: 'Created on',
  lastUpdated: 'Last updated',
  lastPublished: 'Last published',
} as const;
export type ItemTime = keyof typeof ITEM_TIMES;
export const isItemTime = (id: string): id is ItemTime => id in ITEM_TIMES;

export const WEBFLOW_IMAGE_MAX_BYTES = 4 * 1024 * 1024;

/** Webflow field type -> canonical type; undefined means not synced. */
export function canonicalType(type: WebflowFieldType): CanonicalFieldType | undefined {
  switch (type) {
    case 'PlainText':
    case 'Color':
      return 'text';
    case 'RichText':
      return 'rich_text';
    case 'Email':
      return 'email';
    case 'Phone':
      return 'phone';
    case 'Link':
    case 'VideoLink':
      return 'url';
    case 'Number':
      return 'number';
    case 'Switch':
      return 'boolean';
    case 'DateTime':
      return 'datetime';
    case 'Option':
      return 'single_select';
    case 'Reference':
    case 'MultiReference':
      return 'relations';
    case 'Image':
    case 'MultiImage':
    case 'File':
      return 'attachments';
    default:
      return undefined;
  }
}

export const optionsOf = (f: WebflowField): WebflowOption[] =>
  f.validations?.options ?? f.metadata?.options ?? [];
export const referencedCollection = (f: WebflowField): string | undefined =>
  f.validations?.collectionId ?? f.metadata?.collectionId ?? undefined;
export const isImageType = (type: WebflowFieldType) =>
  type === 'Image' || type === 'MultiImage' || type === 'File';

export type CanonicalField = {
  remoteId: string;
  name: string;
  fieldType: CanonicalFieldType;
  readOnly: boolean;
  options: Record<string, unknown>;
};

/** A collection's fields as canonical fields (unsupported types left out), then the item times. */
export function webflowFields(collection: WebflowCollection): CanonicalField[] {
  const out: CanonicalField[] = [];
  for (const f of collection.fields) {
    const fieldType = canonicalType(f.type);
    if (!fieldType) continue;
    const choices = optionsOf(f).map((o) => o.name);
    const references = referencedCollection(f);
    out.push({
      remoteId: f.slug,
      name: f.displayName || f.slug,
      fieldType,
      readOnly: f.isEditable === false,
      options: {
        webflowType: f.type,
        webflowFieldId: f.id,
        // The slug is made from the name when a create has none: only the name is required of Lockstep.
        ...(f.isRequired && f.slug !== 'slug' ? { required: true } : {}),
        ...(f.slug === 'slug' ? { unique: true } : {}),
        ...(fieldType === 'single_select' ? { choices } : {}),
        ...(fieldType === 'relations' && references ? { references, single: f.type === 'Reference' } : {}),
      },
    });
  }
  for (const [id, name] of Object.entries(ITEM_TIMES))
    out.push({
      remoteId: id,
      name,
      fieldType: 'datetime',
      readOnly: true,
      options: { webflowType: 'ItemTime' },
    });
  return out;
}

const basename = (url: string) => {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '') || 'file';
  } catch {
    return url.split('/').pop() || 'file';
  }
};

function imageToAttachment(img: WebflowImage): Attachment | null {
  if (!img || typeof img.url !== 'string' || img.url === '') return null;
  const alt = typeof img.alt === 'string' && img.alt.trim() !== '' ? img.alt.trim() : null;
  return { url: img.url, filename: alt ?? basename(img.url), size: null, type: null };
}

/** A field's raw `fieldData` value as a canonical value. */
export function toCanonical(f: WebflowField, raw: unknown): CanonicalValue {
  const type = canonicalType(f.type);
  if (!type) return null;
  if (raw === undefined || raw === null) return type === 'boolean' ? false : null;
  let value: unknown = raw;
  switch (f.type) {
    case 'RichText':
      value = typeof raw === 'string' && raw.trim() !== '' ? markdownFromHtml(raw) : null;
      break;
    case 'Option': {
      const id = String(raw);
      value = optionsOf(f).find((o) => o.id === id)?.name ?? id;
      break;
    }
    case 'Reference':
      value = raw === '' ? null : [String(raw)];
      break;
    case 'MultiReference':
      value = Array.isArray(raw) ? raw.map(String) : [String(raw)];
      break;
    case 'Image':
    case 'File': {
      const a = imageToAttachment(raw as WebflowImage);
      value = a ? [a] : null;
      break;
    }
    case 'MultiImage':
      value = Array.isArray(raw)
        ? (raw as WebflowImage[]).map(imageToAttachment).filter((a): a is Attachment => a !== null)
        : null;
      break;
  }
  const result = normalizeValue(type, value);
  return result.ok ? result.value : null;
}

/** A value Webflow cannot take, with text for the person who wrote it. */
export class WebflowValueError extends Error {}

function attachmentToImage(a: Attachment): WebflowImage {
  const alt = a.filename && a.filename !== basename(a.url) ? a.filename : null;
  return { url: a.url, ...(alt ? { alt } : {}) };
}

/** A canonical value as Webflow's `fieldData` value (null clears a field). */
export function fromCanonical(f: WebflowField, value: CanonicalValue): unknown {
  const type = canonicalType(f.type);
  if (!type) return undefined;
  const label = f.displayName || f.slug;
  const normalized = normalizeValue(type, value ?? null);
  if (!normalized.ok) throw new WebflowValueError(`${label}: ${normalized.problem.message}`);
  const v = normalized.value;
  if (v === null) {
    if (f.type === 'Switch') return false;
    if (f.type === 'MultiReference' || f.type === 'MultiImage') return [];
    return null;
  }
  switch (f.type) {
    case 'RichText':
      return markdownToHtml(String(v));
    case 'Number':
      return Number(v);
    case 'Switch':
      return v === true;
    case 'Option': {
      const name = String(v);
      const options = optionsOf(f);
      const option =
        options.find((o) => o.name === name) ??
        options.find((o) => o.name.toLowerCase() === name.toLowerCase()) ??
        options.find((o) => o.id === name);
      if (!option)
        throw new WebflowValueError(
          `"${name}" is not an option of ${label} (${options.map((o) => o.name).join(', ') || 'none'})`,
        );
      return option.id;
    }
    case 'Reference': {
      const ids = v as string[];
      if (ids.length > 1)
        throw new WebflowValueError(`${label} holds one reference; ${ids.length} were given`);
      return ids[0] ?? null;
    }
    case 'MultiReference':
      return v as string[];
    case 'Image':
    case 'File': {
      const list = v as Attachment[];
      if (list.length > 1)
        throw new WebflowValueError(
          `${label} holds one ${f.type === 'File' ? 'file' : 'image'}; ${list.length} were given`,
        );
      return list[0] ? attachmentToImage(list[0]) : null;
    }
    case 'MultiImage':
      return (v as Attachment[]).map(attachmentToImage);
    default:
      return v;
  }
}

/**
 * A slug made from a name: lower case, accents dropped, anything but letters and digits a hyphen,
 * no leading, trailing or doubled hyphens, at most 100 characters; `item` when nothing is left.
 */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/g, '');
  return s || 'item';
}

/** `base`, or `base-2`, `base-3`, ... the first not in `taken` (which it is then added to). */
export function uniqueSlug(base: string, taken: Set<string>): string {
  let slug = base;
  for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
  taken.add(slug);
  return slug;
}

/** The images a value holds, by URL (for the check that Webflow kept what was sent). */
export function imageUrls(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list
    .map((x) => (x && typeof x === 'object' ? (x as WebflowImage).url : null))
    .filter((u): u is string => typeof u === 'string' && u !== '');
}
