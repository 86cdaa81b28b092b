/**
 * The in-memory Webflow workspace behind the simulator: sites, CMS collections with typed fields,
 * and items in Webflow's two states. Writes change the staged item; the live item (what
 * `/items/live` shows) is a copy taken when the item is published (`publishItems`, a site publish,
 * or a `/live` write) and removed when it is unpublished. Routes (routes.ts) turn HTTP into calls
 * here; tests call the same methods to edit "in Webflow" (source `app`), with the same rules and
 * webhooks as API writes.
 */
import { type Clock, seededRandom, systemClock, TokenRegistry } from '../http.ts';
import { type Detail, type FieldDef, normalizeValue, type ValueContext, validSlug } from './fields.ts';

// ---------------------------------------------------------------------------------------------
// Errors: Webflow's body is {code, message, externalReference, details}

export class WebflowApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get body(): Record<string, unknown> {
    return { message: this.message, code: this.code, externalReference: null, details: this.details };
  }
}

export const notFound = (what?: 'site') =>
  new WebflowApiError(
    404,
    'resource_not_found',
    what === 'site'
      ? 'Requested resource not found: The site cannot be found'
      : 'Requested resource not found',
  );

export const validationError = (details: Detail[]) =>
  new WebflowApiError(400, 'validation_error', 'Validation Error', details);

export const badRequest = (message = 'Bad Request: Request is malformed') =>
  new WebflowApiError(400, 'bad_request', message);

// ---------------------------------------------------------------------------------------------
// State types

export type Domain = { id: string; url: string; lastPublished: number | null };

export type Site = {
  id: string;
  workspaceId: string;
  displayName: string;
  shortName: string;
  timeZone: string;
  createdOn: number;
  lastUpdated: number;
  lastPublished: number | null;
  customDomains: Domain[];
  locale: { id: string; cmsLocaleId: string; displayName: string; tag: string };
};

export type Collection = {
  id: string;
  siteId: string;
  displayName: string;
  singularName: string;
  slug: string;
  createdOn: number;
  lastUpdated: number;
  fields: FieldDef[];
};

export type FieldData = Record<string, unknown>;

export type LiveVersion = { fieldData: FieldData; lastUpdated: number; publishedAt: number };

export type Item = {
  id: string;
  collectionId: string;
  cmsLocaleId: string;
  createdOn: number;
  lastUpdated: number;
  lastPublished: number | null;
  isArchived: boolean;
  isDraft: boolean;
  /** The staged values; unset fields are absent (Webflow leaves them out of `fieldData`). */
  fieldData: FieldData;
  /** What the live site shows, if published. */
  live?: LiveVersion;
};

export type ItemInput = {
  fieldData?: Record<string, unknown>;
  isArchived?: boolean;
  isDraft?: boolean;
  cmsLocaleId?: string;
};

export type ChangeSource = 'api' | 'app';

export type ItemEventKind = 'created' | 'changed' | 'deleted' | 'published' | 'unpublished';

export type ItemEvent = {
  kind: ItemEventKind;
  siteId: string;
  workspaceId: string;
  collectionId: string;
  /** The item as the API renders it (staged values; live values for `published`). */
  item: Record<string, unknown>;
  source: ChangeSource;
  at: number;
};

export type WriteOptions = {
  source?: ChangeSource;
  /** Webflow's `skipInvalidFiles` (default true: an oversize image is skipped, the item saved). */
  skipInvalidFiles?: boolean;
};

export const MAX_BULK_ITEMS = 100;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function renderItem(item: Item): Record<string, unknown> {
  return {
    id: item.id,
    cmsLocaleId: item.cmsLocaleId,
    lastPublished: iso(item.lastPublished),
    lastUpdated: iso(item.lastUpdated),
    createdOn: iso(item.createdOn),
    isArchived: item.isArchived,
    isDraft: item.isDraft,
    fieldData: structuredClone(item.fieldData),
  };
}

/** The live version of an item, as `/items/live` shows it. */
export function renderLive(item: Item): Record<string, unknown> | undefined {
  if (!item.live) return undefined;
  return {
    id: item.id,
    cmsLocaleId: item.cmsLocaleId,
    lastPublished: iso(item.live.publishedAt),
    lastUpdated: iso(item.live.lastUpdated),
    createdOn: iso(item.createdOn),
    isArchived: false,
    isDraft: false,
    fieldData: structuredClone(item.live.fieldData),
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------------------------

export type WebflowStateOptions = {
  clock?: Clock;
  /** Seed for reproducible ids. */
  idSeed?: number;
};

export class WebflowState {
  readonly clock: Clock;
  readonly tokens: TokenRegistry;
  readonly workspaceId: string;
  readonly sites = new Map<string, Site>();
  readonly collections = new Map<string, Collection>();
  /** Items per collection, in creation order. */
  readonly items = new Map<string, Map<string, Item>>();
  /** Sizes (bytes) of files at public URLs, as Webflow would find them when downloading. */
  readonly remoteFiles = new Map<string, number>();
  /** Files skipped for their size, newest last. */
  readonly droppedFiles: { collectionId: string; itemId: string; field: string; url: string }[] = [];
  private readonly random: () => number;
  private readonly listeners: ((e: ItemEvent) => void)[] = [];

  constructor(options: WebflowStateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.tokens = new TokenRegistry(this.clock);
    this.random = options.idSeed === undefined ? Math.random : seededRandom(options.idSeed);
    this.workspaceId = this.newId();
  }

  /** A 24-hex-digit id, like Webflow's (MongoDB ObjectIds). */
  newId(): string {
    const seconds = Math.floor(this.clock.now() / 1000)
      .toString(16)
      .padStart(8, '0');
    let rest = '';
    for (let i = 0; i < 16; i++) rest += Math.floor(this.random() * 16).toString(16);
    return (seconds + rest).slice(0, 24);
  }

  /** A random hex string (tokens, secrets). */
  newSecret(length = 64): string {
    let out = '';
    for (let i = 0; i < length; i++) out += Math.floor(this.random() * 16).toString(16);
    return out;
  }

  onChange(listener: (e: ItemEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(
    kind: ItemEventKind,
    collection: Collection,
    item: Record<string, unknown>,
    source: ChangeSource,
  ) {
    const site = this.sites.get(collection.siteId);
    const e: ItemEvent = {
      kind,
      siteId: collection.siteId,
      workspaceId: site?.workspaceId ?? this.workspaceId,
      collectionId: collection.id,
      item,
      source,
      at: this.clock.now(),
    };
    for (const l of this.listeners) l(e);
  }

  // -------------------------------------------------------------------------------------------
  // Sites and collections

  addSite(input: {
    displayName: string;
    shortName: string;
    timeZone?: string;
    customDomains?: string[];
  }): Site {
    const now = this.clock.now();
    const site: Site = {
      id: this.newId(),
      workspaceId: this.workspaceId,
      displayName: input.displayName,
      shortName: input.shortName,
      timeZone: input.timeZone ?? 'America/New_York',
      createdOn: now,
      lastUpdated: now,
      lastPublished: null,
      customDomains: (input.customDomains ?? []).map((url) => ({
        id: this.newId(),
        url,
        lastPublished: null,
      })),
      locale: {
        id: this.newId(),
        cmsLocaleId: this.newId(),
        displayName: 'English (United States)',
        tag: 'en-US',
      },
    };
    this.sites.set(site.id, site);
    return site;
  }

  site(id: string): Site {
    const s = this.sites.get(id);
    if (!s) throw notFound('site');
    return s;
  }

  /**
   * Add a collection. `name` (PlainText) and `slug` (PlainText) come first and are always
   * required, as in Webflow; `fields` are the custom ones.
   */
  addCollection(
    siteId: string,
    input: {
      displayName: string;
      singularName: string;
      slug: string;
      fields: (Omit<FieldDef, 'id' | 'isEditable' | 'helpText' | 'validations' | 'isRequired'> &
        Partial<Pick<FieldDef, 'isEditable' | 'helpText' | 'isRequired'>> & {
          /** Option names (ids are generated) or a referenced collection id. */
          options?: string[];
          collectionId?: string;
        })[];
    },
  ): Collection {
    this.site(siteId);
    const now = this.clock.now();
    const base: FieldDef[] = [
      {
        id: this.newId(),
        slug: 'name',
        displayName: 'Name',
        type: 'PlainText',
        isRequired: true,
        isEditable: true,
        helpText: null,
        validations: { maxLength: 256 },
      },
      {
        id: this.newId(),
        slug: 'slug',
        displayName: 'Slug',
        type: 'PlainText',
        isRequired: true,
        isEditable: true,
        helpText: null,
        validations: { maxLength: 256 },
      },
    ];
    const custom: FieldDef[] = input.fields.map((f) => {
      let validations: Record<string, unknown> | null = null;
      if (f.type === 'Option')
        validations = { options: (f.options ?? []).map((name) => ({ id: this.newId(), name })) };
      if (f.type === 'Reference' || f.type === 'MultiReference')
        validations = { collectionId: f.collectionId ?? '' };
      return {
        id: this.newId(),
        slug: f.slug,
        displayName: f.displayName,
        type: f.type,
        isRequired: f.isRequired ?? false,
        isEditable: f.isEditable ?? true,
        helpText: f.helpText ?? null,
        validations,
      };
    });
    const collection: Collection = {
      id: this.newId(),
      siteId,
      displayName: input.displayName,
      singularName: input.singularName,
      slug: input.slug,
      createdOn: now,
      lastUpdated: now,
      fields: [...base, ...custom],
    };
    this.collections.set(collection.id, collection);
    this.items.set(collection.id, new Map());
    return collection;
  }

  collection(id: string): Collection {
    const c = this.collections.get(id);
    if (!c) throw notFound();
    return c;
  }

  /** The option id of an Option field's choice, by name (for seeding and tests). */
  optionId(collectionId: string, fieldSlug: string, name: string): string {
    const field = this.collection(collectionId).fields.find((f) => f.slug === fieldSlug);
    const options = (field?.validations?.options ?? []) as { id: string; name: string }[];
    const o = options.find((x) => x.name === name);
    if (!o) throw new Error(`No option ${name} on ${fieldSlug}`);
    return o.id;
  }

  // -------------------------------------------------------------------------------------------
  // Items: reads

  private itemMap(collectionId: string): Map<string, Item> {
    this.collection(collectionId);
    return this.items.get(collectionId) as Map<string, Item>;
  }

  listItems(collectionId: string): Item[] {
    return [...this.itemMap(collectionId).values()];
  }

  item(collectionId: string, itemId: string): Item {
    const it = this.itemMap(collectionId).get(itemId);
    if (!it) throw notFound();
    return it;
  }

  itemExists(collectionId: string, itemId: string): boolean {
    return this.items.get(collectionId)?.has(itemId) ?? false;
  }

  // -------------------------------------------------------------------------------------------
  // Items: validation

  private valueContext(collection: Collection, skipInvalidFiles: boolean, dropped: string[]): ValueContext {
    return {
      siteId: collection.siteId,
      skipInvalidFiles,
      remoteFileSize: (url) => this.remoteFiles.get(url) ?? 150_000,
      newFileId: () => this.newId(),
      itemExists: (c, i) => this.itemExists(c, i),
      onDropped: (url) => dropped.push(url),
    };
  }

  /**
   * Check written values against the collection's fields. Returns the values to write (a `null`
   * clears a field; a dropped image is left out) and the problems found.
   */
  private checkFieldData(
    collection: Collection,
    raw: Record<string, unknown>,
    creating: boolean,
    skipInvalidFiles: boolean,
  ): { values: FieldData; details: Detail[]; dropped: { field: string; url: string }[] } {
    const values: FieldData = {};
    const details: Detail[] = [];
    const dropped: { field: string; url: string }[] = [];
    for (const [slug, value] of Object.entries(raw)) {
      const def = collection.fields.find((f) => f.slug === slug);
      if (!def) {
        details.push({ param: slug, description: `Field not described in schema: '${slug}'` });
        continue;
      }
      if (!def.isEditable) {
        details.push({ param: slug, description: 'Field is not editable' });
        continue;
      }
      const files: string[] = [];
      const r = normalizeValue(def, value, this.valueContext(collection, skipInvalidFiles, files));
      for (const url of files) dropped.push({ field: slug, url });
      if (r.ok === 'dropped') continue;
      if (!r.ok) {
        details.push(r.detail);
        continue;
      }
      if (r.value === null && def.isRequired) {
        details.push({ param: slug, description: 'Field is required' });
        continue;
      }
      if (slug === 'slug' && typeof r.value === 'string' && !validSlug(r.value)) {
        details.push({
          param: 'slug',
          description: `Slug must contain only lowercase letters, numbers, '-' and '_': '${r.value}'`,
        });
        continue;
      }
      values[slug] = r.value;
    }
    if (creating) {
      for (const def of collection.fields) {
        if (def.isRequired && (values[def.slug] === undefined || values[def.slug] === null)) {
          if (!details.some((d) => d.param === def.slug))
            details.push({ param: def.slug, description: 'Field is required' });
        }
      }
    }
    return { values, details, dropped };
  }

  private slugTaken(collectionId: string, slug: string, exceptId?: string): boolean {
    for (const it of this.itemMap(collectionId).values()) {
      if (it.id !== exceptId && it.fieldData.slug === slug) return true;
    }
    return false;
  }

  private checkLocale(collection: Collection, input: ItemInput): void {
    const site = this.site(collection.siteId);
    if (input.cmsLocaleId !== undefined && input.cmsLocaleId !== site.locale.cmsLocaleId) {
      throw validationError([{ param: 'cmsLocaleId', description: 'Provided ID is invalid' }]);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Items: writes (all inputs of one call are checked before anything is stored)

  createItems(collectionId: string, inputs: ItemInput[], options: WriteOptions = {}): Item[] {
    const collection = this.collection(collectionId);
    if (inputs.length > MAX_BULK_ITEMS) throw tooManyItems();
    const source = options.source ?? 'app';
    const details: Detail[] = [];
    const prepared: { input: ItemInput; values: FieldData; dropped: { field: string; url: string }[] }[] = [];
    const slugs = new Set<string>();
    for (const input of inputs) {
      this.checkLocale(collection, input);
      const r = this.checkFieldData(
        collection,
        input.fieldData ?? {},
        true,
        options.skipInvalidFiles ?? true,
      );
      details.push(...r.details);
      const slug = r.values.slug;
      if (typeof slug === 'string') {
        if (this.slugTaken(collectionId, slug) || slugs.has(slug)) {
          details.push({ param: 'slug', description: `Unique value is already in database: '${slug}'` });
        }
        slugs.add(slug);
      }
      prepared.push({ input, values: r.values, dropped: r.dropped });
    }
    if (details.length > 0) throw validationError(details);
    const now = this.clock.now();
    const site = this.site(collection.siteId);
    const created: Item[] = [];
    for (const { input, values, dropped } of prepared) {
      const fieldData: FieldData = {};
      for (const [k, v] of Object.entries(values)) if (v !== null) fieldData[k] = v;
      const item: Item = {
        id: this.newId(),
        collectionId,
        cmsLocaleId: site.locale.cmsLocaleId,
        createdOn: now,
        lastUpdated: now,
        lastPublished: null,
        isArchived: input.isArchived ?? false,
        isDraft: input.isDraft ?? false,
        fieldData,
      };
      this.itemMap(collectionId).set(item.id, item);
      for (const d of dropped) this.droppedFiles.push({ collectionId, itemId: item.id, ...d });
      created.push(item);
    }
    for (const item of created) this.emit('created', collection, renderItem(item), source);
    return created;
  }

  updateItems(
    collectionId: string,
    inputs: (ItemInput & { id: string })[],
    options: WriteOptions = {},
  ): Item[] {
    const collection = this.collection(collectionId);
    if (inputs.length > MAX_BULK_ITEMS) throw tooManyItems();
    const source = options.source ?? 'app';
    const details: Detail[] = [];
    const prepared: {
      item: Item;
      input: ItemInput;
      values: FieldData;
      dropped: { field: string; url: string }[];
    }[] = [];
    const slugs = new Map<string, string>();
    for (const input of inputs) {
      const item = this.item(collectionId, String(input.id));
      this.checkLocale(collection, input);
      const r = this.checkFieldData(
        collection,
        input.fieldData ?? {},
        false,
        options.skipInvalidFiles ?? true,
      );
      details.push(...r.details);
      const slug = r.values.slug;
      if (typeof slug === 'string') {
        const other = slugs.get(slug);
        if (this.slugTaken(collectionId, slug, item.id) || (other !== undefined && other !== item.id)) {
          details.push({ param: 'slug', description: `Unique value is already in database: '${slug}'` });
        }
        slugs.set(slug, item.id);
      }
      prepared.push({ item, input, values: r.values, dropped: r.dropped });
    }
    if (details.length > 0) throw validationError(details);
    const now = this.clock.now();
    const changed: Item[] = [];
    for (const { item, input, values, dropped } of prepared) {
      let didChange = false;
      for (const [k, v] of Object.entries(values)) {
        if (sameValue(item.fieldData[k] ?? null, v)) continue;
        if (v === null) delete item.fieldData[k];
        else item.fieldData[k] = v;
        didChange = true;
      }
      if (input.isArchived !== undefined && input.isArchived !== item.isArchived) {
        item.isArchived = input.isArchived;
        didChange = true;
      }
      if (input.isDraft !== undefined && input.isDraft !== item.isDraft) {
        item.isDraft = input.isDraft;
        didChange = true;
      }
      for (const d of dropped) this.droppedFiles.push({ collectionId, itemId: item.id, ...d });
      if (didChange) {
        item.lastUpdated = now;
        changed.push(item);
      }
    }
    for (const item of changed) this.emit('changed', collection, renderItem(item), source);
    return prepared.map((p) => p.item);
  }

  /** Delete items (staged and live). Every id must exist, or nothing is deleted. */
  deleteItems(collectionId: string, ids: string[], source: ChangeSource = 'app'): void {
    const collection = this.collection(collectionId);
    if (ids.length > MAX_BULK_ITEMS) throw tooManyItems();
    const items = ids.map((id) => this.item(collectionId, id));
    for (const item of items) {
      this.itemMap(collectionId).delete(item.id);
      this.emit('deleted', collection, renderItem(item), source);
    }
  }

  /** Publish items: the live version becomes the staged one (archived items leave the live site). */
  publishItems(
    collectionId: string,
    ids: string[],
    source: ChangeSource = 'app',
  ): { publishedItemIds: string[]; errors: string[] } {
    const collection = this.collection(collectionId);
    if (ids.length > MAX_BULK_ITEMS) throw tooManyItems();
    const publishedItemIds: string[] = [];
    const errors: string[] = [];
    for (const id of ids) {
      const item = this.itemMap(collectionId).get(id);
      if (!item) {
        errors.push(`Staging item ID ${id} not found.`);
        continue;
      }
      this.publishOne(collection, item, source);
      publishedItemIds.push(id);
    }
    return { publishedItemIds, errors };
  }

  private publishOne(collection: Collection, item: Item, source: ChangeSource): void {
    const now = this.clock.now();
    if (item.isArchived) {
      if (item.live) this.unpublishOne(collection, item, source);
      return;
    }
    item.isDraft = false;
    item.lastPublished = now;
    item.live = {
      fieldData: structuredClone(item.fieldData),
      lastUpdated: item.lastUpdated,
      publishedAt: now,
    };
    this.emit('published', collection, renderLive(item) as Record<string, unknown>, source);
  }

  private unpublishOne(collection: Collection, item: Item, source: ChangeSource): void {
    const wasLive = item.live !== undefined;
    delete item.live;
    item.isDraft = true;
    item.lastPublished = null;
    if (wasLive) this.emit('unpublished', collection, renderItem(item), source);
  }

  /** Take items off the live site; they become drafts (`isDraft: true`, `lastPublished: null`). */
  unpublishItems(collectionId: string, ids: string[], source: ChangeSource = 'app'): void {
    const collection = this.collection(collectionId);
    if (ids.length > MAX_BULK_ITEMS) throw tooManyItems();
    const items = ids.map((id) => this.item(collectionId, id));
    for (const item of items) this.unpublishOne(collection, item, source);
  }

  /**
   * A site publish: every item that is not a draft and has staged changes goes live; archived
   * items leave the live site.
   */
  publishSite(siteId: string, source: ChangeSource = 'app'): void {
    const site = this.site(siteId);
    const now = this.clock.now();
    for (const collection of this.collections.values()) {
      if (collection.siteId !== siteId) continue;
      for (const item of this.listItems(collection.id)) {
        if (item.isArchived) {
          if (item.live) this.unpublishOne(collection, item, source);
          continue;
        }
        if (item.isDraft) continue;
        if (item.lastPublished === null || !item.live || item.lastUpdated > item.live.lastUpdated)
          this.publishOne(collection, item, source);
      }
    }
    site.lastPublished = now;
  }
}

function tooManyItems(): WebflowApiError {
  return validationError([{ param: 'items', description: `Must contain at most ${MAX_BULK_ITEMS} items` }]);
}
