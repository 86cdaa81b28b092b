/** Airtable field types the simulator knows, their metadata options, and which are read-only. */

export const FIELD_TYPES = [
  'singleLineText',
  'multilineText',
  'email',
  'url',
  'phoneNumber',
  'number',
  'currency',
  'percent',
  'checkbox',
  'singleSelect',
  'multipleSelects',
  'date',
  'dateTime',
  'multipleRecordLinks',
  'multipleAttachments',
  'createdTime',
  'lastModifiedTime',
  'formula',
  'autoNumber',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** Computed fields: writing any value to them is Airtable's 422 INVALID_VALUE_FOR_COLUMN. */
export const READ_ONLY_TYPES: ReadonlySet<FieldType> = new Set<FieldType>([
  'createdTime',
  'lastModifiedTime',
  'formula',
  'autoNumber',
]);

export type SelectChoice = { id: string; name: string; color?: string };

export type FieldOptions = Record<string, unknown>;

export type FieldState = {
  id: string;
  name: string;
  type: FieldType;
  description?: string;
  options?: FieldOptions;
};

export type AttachmentValue = { id: string; url: string; filename: string; size?: number; type?: string };

const COLORS = [
  'blueLight2',
  'cyanLight2',
  'tealLight2',
  'greenLight2',
  'yellowLight2',
  'orangeLight2',
  'redLight2',
  'pinkLight2',
  'purpleLight2',
  'grayLight2',
];

export function choiceColor(index: number): string {
  return COLORS[index % COLORS.length]!;
}

export function isTextType(t: FieldType): boolean {
  return (
    t === 'singleLineText' || t === 'multilineText' || t === 'email' || t === 'url' || t === 'phoneNumber'
  );
}

export function isNumberType(t: FieldType): boolean {
  return t === 'number' || t === 'currency' || t === 'percent' || t === 'autoNumber';
}

export function choicesOf(field: FieldState): SelectChoice[] {
  const choices = field.options?.choices;
  return Array.isArray(choices) ? (choices as SelectChoice[]) : [];
}

const DATE_FORMAT = { name: 'iso', format: 'YYYY-MM-DD' };
const TIME_FORMAT = { name: '24hour', format: 'HH:mm' };

/** Default metadata options for a type, merged under what the definition gives. */
export function defaultOptions(type: FieldType): FieldOptions | undefined {
  switch (type) {
    case 'number':
      return { precision: 0 };
    case 'currency':
      return { precision: 2, symbol: '$' };
    case 'percent':
      return { precision: 0 };
    case 'checkbox':
      return { icon: 'check', color: 'greenBright' };
    case 'singleSelect':
    case 'multipleSelects':
      return { choices: [] };
    case 'date':
      return { dateFormat: DATE_FORMAT };
    case 'dateTime':
      return { dateFormat: DATE_FORMAT, timeFormat: TIME_FORMAT, timeZone: 'utc' };
    case 'createdTime':
    case 'lastModifiedTime':
      return {
        result: {
          type: 'dateTime',
          options: { dateFormat: DATE_FORMAT, timeFormat: TIME_FORMAT, timeZone: 'utc' },
        },
        ...(type === 'lastModifiedTime' ? { isValid: true, referencedFieldIds: [] } : {}),
      };
    case 'multipleAttachments':
      return { isReversed: false };
    default:
      return undefined;
  }
}

const MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
};

export function guessMime(filename: string): string {
  const ext = filename.split('.').pop()?.toLowerCase() ?? '';
  return MIME[ext] ?? 'application/octet-stream';
}

export function filenameFromUrl(url: string): string {
  try {
    const last = new URL(url).pathname.split('/').filter(Boolean).pop();
    return last ? decodeURIComponent(last) : 'file';
  } catch {
    return 'file';
  }
}

/** Airtable omits empty values from records: '', null, [], false. */
export function isEmptyCell(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0);
}
