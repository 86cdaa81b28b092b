/**
 * Webflow CMS field types and how item values are checked and stored, as the Data API v2's
 * "Field Types & Item Values" reference describes them: strings for text, links, emails and
 * phones; numbers; ISO dates; booleans for Switch; colors (hex, rgb/rgba, hsl/hsla, names);
 * option ids; item ids for (Multi)Reference; `{fileId, url, alt}` for Image, MultiImage and File.
 * Images are re-hosted on write (a new fileId and a CDN url); one over 4 MB is skipped (the item
 * is saved without it) unless `skipInvalidFiles=false`, which refuses the write.
 */

export const FIELD_TYPES = [
  'PlainText',
  'RichText',
  'Image',
  'MultiImage',
  'VideoLink',
  'Link',
  'Email',
  'Phone',
  'Number',
  'DateTime',
  'Switch',
  'Color',
  'Option',
  'Reference',
  'MultiReference',
  'File',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

export type FieldDef = {
  id: string;
  slug: string;
  displayName: string;
  type: FieldType;
  isRequired: boolean;
  isEditable: boolean;
  helpText: string | null;
  /** Option: `{ options: [{ id, name }] }`; Reference/MultiReference: `{ collectionId }`. */
  validations: Record<string, unknown> | null;
};

/** One entry of a ValidationError's `details`, as Webflow sends them. */
export type Detail = { param: string; description: string };

/** Webflow's documented maximum size of an image (Image and MultiImage fields). */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;

export type FileValue = { fileId: string; url: string; alt: string | null };

export type ValueContext = {
  siteId: string;
  skipInvalidFiles: boolean;
  /** Size in bytes of the file at a public URL (the simulator's stand-in for downloading it). */
  remoteFileSize: (url: string) => number;
  newFileId: () => string;
  itemExists: (collectionId: string, itemId: string) => boolean;
  /** Told of each file skipped for its size. */
  onDropped?: (url: string) => void;
};

export type ValueResult =
  | { ok: true; value: unknown }
  | { ok: false; detail: Detail }
  /** The value was dropped (an oversize image skipped): nothing is written for this field. */
  | { ok: 'dropped'; files: string[] };

const COLOR_PATTERNS = [
  /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i,
  /^rgba?\(\s*[\d.]+%?\s*,\s*[\d.]+%?\s*,\s*[\d.]+%?\s*(?:,\s*[\d.]+%?\s*)?\)$/i,
  /^hsla?\(\s*[\d.]+(?:deg)?\s*,\s*[\d.]+%\s*,\s*[\d.]+%\s*(?:,\s*[\d.]+%?\s*)?\)$/i,
  /^[a-z]+$/i,
];

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const bad = (param: string, description: string): ValueResult => ({
  ok: false,
  detail: { param, description },
});

function isUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

function basename(url: string): string {
  try {
    const last = new URL(url).pathname
      .split('/')
      .filter((p) => p !== '')
      .pop();
    return last ?? 'file';
  } catch {
    return 'file';
  }
}

/** Upload (or keep) one file reference; an image over 4 MB is dropped or refused. */
function fileValue(
  def: FieldDef,
  raw: unknown,
  ctx: ValueContext,
  isImage: boolean,
): { ok: true; value: FileValue } | { ok: false; detail: Detail } | { ok: 'dropped'; file: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, detail: { param: def.slug, description: 'Expected an object with a url or fileId' } };
  }
  const input = raw as { fileId?: unknown; url?: unknown; alt?: unknown };
  const alt = typeof input.alt === 'string' ? input.alt : null;
  if (typeof input.fileId === 'string' && input.fileId !== '' && typeof input.url === 'string') {
    // A reference to a file already in the site's assets.
    return { ok: true, value: { fileId: input.fileId, url: input.url, alt } };
  }
  if (typeof input.url !== 'string' || !isUrl(input.url)) {
    return { ok: false, detail: { param: def.slug, description: 'Remote file url is invalid' } };
  }
  const size = ctx.remoteFileSize(input.url);
  if (isImage && size > MAX_IMAGE_BYTES) {
    if (ctx.skipInvalidFiles) {
      ctx.onDropped?.(input.url);
      return { ok: 'dropped', file: input.url };
    }
    return {
      ok: false,
      detail: {
        param: def.slug,
        description: `Remote file exceeds the maximum image size of 4MB: ${input.url}`,
      },
    };
  }
  const fileId = ctx.newFileId();
  return {
    ok: true,
    value: {
      fileId,
      url: `https://cdn.prod.website-files.com/${ctx.siteId}/${fileId}_${basename(input.url)}`,
      alt,
    },
  };
}

/** Check and normalize one written value; `null` (or `''`) clears the field. */
export function normalizeValue(def: FieldDef, raw: unknown, ctx: ValueContext): ValueResult {
  const p = def.slug;
  if (raw === null || raw === '') return { ok: true, value: null };
  switch (def.type) {
    case 'PlainText':
    case 'RichText':
    case 'Phone': {
      if (typeof raw !== 'string') return bad(p, 'Expected a string');
      const max = def.validations?.maxLength;
      if (typeof max === 'number' && raw.length > max) return bad(p, `Must be at most ${max} characters`);
      return { ok: true, value: raw };
    }
    case 'Link':
    case 'VideoLink':
      if (typeof raw !== 'string' || !isUrl(raw)) return bad(p, 'Expected a valid URL');
      return { ok: true, value: raw };
    case 'Email':
      if (typeof raw !== 'string' || !EMAIL.test(raw)) return bad(p, 'Invalid email address');
      return { ok: true, value: raw };
    case 'Number':
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return bad(p, 'Expected a number');
      return { ok: true, value: raw };
    case 'DateTime': {
      if (typeof raw !== 'string' || Number.isNaN(Date.parse(raw)))
        return bad(p, 'Expected an ISO 8601 date string');
      return { ok: true, value: new Date(raw).toISOString() };
    }
    case 'Switch':
      if (typeof raw !== 'boolean') return bad(p, 'Expected a boolean');
      return { ok: true, value: raw };
    case 'Color':
      if (typeof raw !== 'string' || !COLOR_PATTERNS.some((re) => re.test(raw.trim())))
        return bad(p, 'Invalid color');
      return { ok: true, value: raw.trim() };
    case 'Option': {
      const options = (def.validations?.options ?? []) as { id: string; name: string }[];
      if (typeof raw !== 'string' || !options.some((o) => o.id === raw))
        return bad(p, `Invalid option id: '${String(raw)}'`);
      return { ok: true, value: raw };
    }
    case 'Reference': {
      const target = String(def.validations?.collectionId ?? '');
      if (typeof raw !== 'string') return bad(p, 'Expected an item id');
      if (!ctx.itemExists(target, raw)) return bad(p, `Referenced item not found: '${raw}'`);
      return { ok: true, value: raw };
    }
    case 'MultiReference': {
      const target = String(def.validations?.collectionId ?? '');
      if (!Array.isArray(raw) || raw.some((v) => typeof v !== 'string'))
        return bad(p, 'Expected an array of item ids');
      const missing = (raw as string[]).filter((id) => !ctx.itemExists(target, id));
      if (missing.length > 0)
        return bad(p, `Referenced items not found: ${missing.map((m) => `'${m}'`).join(', ')}`);
      if (raw.length === 0) return { ok: true, value: null };
      return { ok: true, value: [...new Set(raw as string[])] };
    }
    case 'Image':
    case 'File': {
      const r = fileValue(def, raw, ctx, def.type === 'Image');
      if (r.ok === 'dropped') return { ok: 'dropped', files: [r.file] };
      return r;
    }
    case 'MultiImage': {
      if (!Array.isArray(raw)) return bad(p, 'Expected an array of images');
      const out: FileValue[] = [];
      const dropped: string[] = [];
      for (const entry of raw) {
        const r = fileValue(def, entry, ctx, true);
        if (r.ok === 'dropped') dropped.push(r.file);
        else if (r.ok) out.push(r.value);
        else return r;
      }
      if (out.length === 0 && dropped.length > 0) return { ok: 'dropped', files: dropped };
      return { ok: true, value: out.length === 0 ? null : out };
    }
  }
}

/** Slugs are lowercase letters, digits, `-` and `_` (at most 256 characters). */
export function validSlug(slug: string): boolean {
  return /^[a-z0-9_-]+$/.test(slug) && slug.length <= 256 && !/^-|-$/.test(slug);
}
