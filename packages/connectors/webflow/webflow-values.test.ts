import { describe, expect, it } from 'vitest';
import { publishModeOf, publishSiteWith, tokenOf } from './port';
import { mapWebflowError } from './webflow-api';
import { fingerprint, packKnown, unpackKnown } from './webflow-connector';
import {
  canonicalType,
  fromCanonical,
  slugify,
  toCanonical,
  uniqueSlug,
  type WebflowField,
  WebflowValueError,
  webflowFields,
} from './webflow-values';

const field = (slug: string, type: string, extra: Partial<WebflowField> = {}): WebflowField => ({
  id: `f-${slug}`,
  slug,
  displayName: slug[0]?.toUpperCase() + slug.slice(1),
  type,
  isRequired: false,
  isEditable: true,
  ...extra,
});

const status = field('status', 'Option', {
  validations: {
    options: [
      { id: 'opt-a', name: 'Active' },
      { id: 'opt-b', name: 'Archived' },
    ],
  },
});

describe('Webflow fields', () => {
  it('types each Webflow field canonically, leaves unknown ones out and adds the read-only times', () => {
    const fields = webflowFields({
      id: 'c1',
      displayName: 'Posts',
      fields: [
        field('name', 'PlainText', { isRequired: true }),
        field('slug', 'PlainText', { isRequired: true }),
        field('body', 'RichText'),
        field('email', 'Email'),
        field('phone', 'Phone'),
        field('website', 'Link'),
        field('score', 'Number'),
        field('featured', 'Switch'),
        field('published-at', 'DateTime'),
        status,
        field('author', 'Reference', { validations: { collectionId: 'c-authors' } }),
        field('tags', 'MultiReference', { validations: { collectionId: 'c-tags' } }),
        field('photo', 'Image'),
        field('gallery', 'MultiImage'),
        field('brochure', 'File'),
        field('ext', 'ExtFileRef'),
      ],
    });
    const by = Object.fromEntries(fields.map((f) => [f.remoteId, f]));
    expect(by.name).toMatchObject({ fieldType: 'text', options: { required: true } });
    expect(by.slug).toMatchObject({ fieldType: 'text', options: { unique: true } });
    expect(by.slug?.options.required).toBeUndefined();
    expect(by.body?.fieldType).toBe('rich_text');
    expect(by.email?.fieldType).toBe('email');
    expect(by.phone?.fieldType).toBe('phone');
    expect(by.website?.fieldType).toBe('url');
    expect(by.score?.fieldType).toBe('number');
    expect(by.featured?.fieldType).toBe('boolean');
    expect(by['published-at']?.fieldType).toBe('datetime');
    expect(by.status).toMatchObject({
      fieldType: 'single_select',
      options: { choices: ['Active', 'Archived'] },
    });
    expect(by.author).toMatchObject({
      fieldType: 'relations',
      options: { references: 'c-authors', single: true },
    });
    expect(by.tags).toMatchObject({
      fieldType: 'relations',
      options: { references: 'c-tags', single: false },
    });
    expect(by.photo?.fieldType).toBe('attachments');
    expect(by.gallery?.fieldType).toBe('attachments');
    expect(by.brochure?.fieldType).toBe('attachments');
    expect(by.ext).toBeUndefined();
    for (const t of ['createdOn', 'lastUpdated', 'lastPublished'])
      expect(by[t]).toMatchObject({ fieldType: 'datetime', readOnly: true });
    expect(canonicalType('User')).toBeUndefined();
  });
});

describe('Webflow values', () => {
  it('reads an option id as its name and writes a name (any case) or id back as the id', () => {
    expect(toCanonical(status, 'opt-b')).toBe('Archived');
    expect(fromCanonical(status, 'Archived')).toBe('opt-b');
    expect(fromCanonical(status, 'active')).toBe('opt-a');
    expect(fromCanonical(status, 'opt-a')).toBe('opt-a');
    expect(fromCanonical(status, null)).toBeNull();
    expect(() => fromCanonical(status, 'Deleted')).toThrow(WebflowValueError);
    expect(() => fromCanonical(status, 'Deleted')).toThrow(/not an option of Status/);
  });

  it('converts rich text between HTML and Markdown', () => {
    const body = field('body', 'RichText');
    expect(toCanonical(body, '<p>Hello <strong>world</strong></p>')).toBe('Hello **world**');
    expect(toCanonical(body, '')).toBeNull();
    expect(fromCanonical(body, 'Hello **world**')).toBe('<p>Hello <strong>world</strong></p>');
  });

  it('converts numbers, switches and dates', () => {
    const n = field('n', 'Number');
    expect(toCanonical(n, 12.5)).toBe('12.5');
    expect(fromCanonical(n, '12.50')).toBe(12.5);
    const s = field('s', 'Switch');
    expect(toCanonical(s, undefined)).toBe(false);
    expect(toCanonical(s, true)).toBe(true);
    expect(fromCanonical(s, null)).toBe(false);
    const d = field('d', 'DateTime');
    expect(toCanonical(d, '2024-05-01T10:00:00Z')).toBe('2024-05-01T10:00:00.000Z');
    expect(fromCanonical(d, '2024-05-01T10:00:00.000Z')).toBe('2024-05-01T10:00:00.000Z');
    expect(() => fromCanonical(n, 'lots')).toThrow(WebflowValueError);
  });

  it('reads references as relation lists and refuses two for a single reference', () => {
    const one = field('author', 'Reference');
    const many = field('tags', 'MultiReference');
    expect(toCanonical(one, 'i2')).toEqual(['i2']);
    expect(toCanonical(many, ['i3', 'i1'])).toEqual(['i1', 'i3']);
    expect(fromCanonical(one, ['i2'])).toBe('i2');
    expect(fromCanonical(one, null)).toBeNull();
    expect(fromCanonical(many, null)).toEqual([]);
    expect(() => fromCanonical(one, ['i1', 'i2'])).toThrow(/one reference/);
  });

  it('reads images as attachments (alt as the name) and writes url and alt back', () => {
    const photo = field('photo', 'Image');
    const gallery = field('gallery', 'MultiImage');
    expect(toCanonical(photo, { fileId: 'f1', url: 'https://cdn.example/a/cat.png', alt: 'A cat' })).toEqual([
      { url: 'https://cdn.example/a/cat.png', filename: 'A cat', size: null, type: null },
    ]);
    expect(toCanonical(photo, { fileId: 'f1', url: 'https://cdn.example/a/cat.png', alt: null })).toEqual([
      { url: 'https://cdn.example/a/cat.png', filename: 'cat.png', size: null, type: null },
    ]);
    expect(toCanonical(photo, null)).toBeNull();
    expect(
      fromCanonical(photo, [{ url: 'https://x.example/dog.jpg', filename: 'A dog', size: null, type: null }]),
    ).toEqual({ url: 'https://x.example/dog.jpg', alt: 'A dog' });
    expect(
      fromCanonical(photo, [
        { url: 'https://x.example/dog.jpg', filename: 'dog.jpg', size: null, type: null },
      ]),
    ).toEqual({ url: 'https://x.example/dog.jpg' });
    expect(fromCanonical(gallery, null)).toEqual([]);
    expect(
      toCanonical(gallery, [{ url: 'https://c/1.png' }, { url: 'https://c/2.png', alt: 'two' }]),
    ).toEqual([
      { url: 'https://c/1.png', filename: '1.png', size: null, type: null },
      { url: 'https://c/2.png', filename: 'two', size: null, type: null },
    ]);
    expect(() =>
      fromCanonical(photo, [
        { url: 'https://c/1.png', filename: '1.png', size: null, type: null },
        { url: 'https://c/2.png', filename: '2.png', size: null, type: null },
      ]),
    ).toThrow(/one image/);
  });
});

describe('Webflow slugs', () => {
  it('makes a slug from a name', () => {
    expect(slugify('Hello, World!')).toBe('hello-world');
    expect(slugify('  Crème brûlée  à la carte ')).toBe('creme-brulee-a-la-carte');
    expect(slugify('***')).toBe('item');
    expect(slugify('x'.repeat(150))).toHaveLength(100);
  });

  it('appends -2, -3 on a collision', () => {
    const taken = new Set(['post', 'post-2']);
    expect(uniqueSlug('post', taken)).toBe('post-3');
    expect(uniqueSlug('post', taken)).toBe('post-4');
    expect(uniqueSlug('other', taken)).toBe('other');
    expect(uniqueSlug('other', taken)).toBe('other-2');
  });
});

describe('Webflow errors', () => {
  it('maps Webflow error bodies to connector codes', () => {
    const h = (o: Record<string, string> = {}) => new Headers(o);
    expect(
      mapWebflowError(401, { code: 'not_authorized', message: 'Request not authorized' }, h()).code,
    ).toBe('auth_invalid');
    expect(mapWebflowError(403, { code: 'missing_scopes', message: 'cms:write' }, h()).code).toBe(
      'permission_denied',
    );
    expect(mapWebflowError(404, { code: 'resource_not_found' }, h()).code).toBe('not_found');
    const v = mapWebflowError(
      400,
      {
        code: 'validation_error',
        message: 'Validation Error',
        details: [{ param: 'slug', description: 'Unique value is already in database' }],
      },
      h(),
    );
    expect(v.code).toBe('validation');
    expect(v.userFacingMessage).toMatch(/slug: Unique value is already in database/);
    const r = mapWebflowError(429, { code: 'too_many_requests' }, h({ 'retry-after': '7' }));
    expect(r.code).toBe('rate_limited');
    expect(r.retryAfterMs).toBe(7000);
    expect(mapWebflowError(429, {}, h()).retryAfterMs).toBe(60_000);
    expect(mapWebflowError(502, 'bad gateway', h()).code).toBe('transient');
  });
});

describe('Webflow read cursor', () => {
  it('packs what a pass saw and tells items apart by lastUpdated and values', () => {
    const known = new Map([
      ['a1', { h: 'x.1', p: 1 as const }],
      ['b2', { h: 'y.2', p: 0 as const }],
    ]);
    expect(unpackKnown(packKnown(known))).toEqual(known);
    const rec = { id: 'a1', fields: { name: 'A' } };
    const t1 = fingerprint({ id: 'a1', lastUpdated: '2024-01-01T00:00:00Z', fieldData: {} }, rec);
    const t2 = fingerprint({ id: 'a1', lastUpdated: '2024-01-01T00:00:01Z', fieldData: {} }, rec);
    const v2 = fingerprint(
      { id: 'a1', lastUpdated: '2024-01-01T00:00:00Z', fieldData: {} },
      { id: 'a1', fields: { name: 'B' } },
    );
    expect(new Set([t1, t2, v2]).size).toBe(3);
  });
});

describe('Webflow connection items', () => {
  it('asks for a token and a known publish mode', () => {
    expect(() => tokenOf({})).toThrow(
      expect.objectContaining({ userFacingMessage: expect.stringMatching(/site token/) }),
    );
    expect(tokenOf({ apiToken: ' t ' })).toBe('t');
    expect(publishModeOf({})).toBe('staged');
    expect(publishModeOf({ publish: 'Live' })).toBe('live');
    expect(() => publishModeOf({ publish: 'soon' })).toThrow(
      expect.objectContaining({ userFacingMessage: expect.stringMatching(/staged/) }),
    );
  });
});

describe('Webflow site publishing', () => {
  const fakeClient = (answers: Record<string, () => unknown>) => {
    const calls: { method: string; path: string; body?: unknown }[] = [];
    return {
      calls,
      client: {
        http: null as never,
        async request<T>(r: { method: string; path: string; body?: unknown }) {
          calls.push({ method: r.method, path: r.path, body: r.body });
          const answer = answers[`${r.method} ${r.path}`];
          if (!answer) throw new Error(`unexpected ${r.method} ${r.path}`);
          return { status: 200, headers: new Headers(), body: answer() as T };
        },
      },
    };
  };

  it('publishes to the webflow.io subdomain and every custom domain', async () => {
    const { client, calls } = fakeClient({
      'GET /sites/s1': () => ({ id: 's1', customDomains: [{ id: 'd1', url: 'example.com' }] }),
      'POST /sites/s1/publish': () => ({ customDomains: [], publishToWebflowSubdomain: true }),
    });
    const result = await publishSiteWith(client, 's1');
    expect(result.publishedTo).toEqual(['webflow.io', 'example.com']);
    expect(calls[1]).toEqual({
      method: 'POST',
      path: '/sites/s1/publish',
      body: { customDomains: ['d1'], publishToWebflowSubdomain: true },
    });
  });

  it("says how long to wait when Webflow's one publish a minute is used up", async () => {
    const { client } = fakeClient({
      'GET /sites/s1': () => ({ id: 's1', customDomains: [] }),
      'POST /sites/s1/publish': () => {
        throw mapWebflowError(429, { code: 'too_many_requests' }, new Headers({ 'retry-after': '42' }));
      },
    });
    await expect(publishSiteWith(client, 's1')).rejects.toMatchObject({
      code: 'rate_limited',
      userFacingMessage: 'Webflow publishes a site at most once a minute. Try again in 42 seconds.',
    });
  });
});
