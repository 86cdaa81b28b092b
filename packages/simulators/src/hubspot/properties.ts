/**
 * HubSpot property definitions: the default properties of contacts, companies and deals (a
 * subset of HubSpot's, with its internal names and enumeration values) and value validation.
 * Every value is a string on the wire; these rules decide what a write may store.
 */

export const OBJECT_TYPES = ['contacts', 'companies', 'deals'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/** HubSpot's object type ids, accepted in paths in place of the names. */
export const OBJECT_TYPE_IDS: Record<string, ObjectType> = {
  '0-1': 'contacts',
  '0-2': 'companies',
  '0-3': 'deals',
};

/** Singular names used in error messages (`CONTACT`) and association type names (`contact`). */
export const SINGULAR: Record<ObjectType, string> = {
  contacts: 'contact',
  companies: 'company',
  deals: 'deal',
};

export type PropertyType =
  | 'string'
  | 'number'
  | 'date'
  | 'datetime'
  | 'enumeration'
  | 'bool'
  | 'phone_number';

export type PropertyOption = {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
  description?: string;
};

export type PropertyDef = {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  description: string;
  options: PropertyOption[];
  displayOrder: number;
  hasUniqueValue: boolean;
  hidden: boolean;
  formField: boolean;
  calculated: boolean;
  hubspotDefined: boolean;
  /** Only HubSpot can set the value (ids, timestamps). */
  readOnlyValue: boolean;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
};

type Short = {
  name: string;
  label: string;
  type?: PropertyType;
  fieldType?: string;
  group?: string;
  options?: [string, string][];
  readOnly?: boolean;
  unique?: boolean;
};

const LIFECYCLE_STAGES: [string, string][] = [
  ['subscriber', 'Subscriber'],
  ['lead', 'Lead'],
  ['marketingqualifiedlead', 'Marketing Qualified Lead'],
  ['salesqualifiedlead', 'Sales Qualified Lead'],
  ['opportunity', 'Opportunity'],
  ['customer', 'Customer'],
  ['evangelist', 'Evangelist'],
  ['other', 'Other'],
];

export const DEAL_STAGES: [string, string][] = [
  ['appointmentscheduled', 'Appointment Scheduled'],
  ['qualifiedtobuy', 'Qualified To Buy'],
  ['presentationscheduled', 'Presentation Scheduled'],
  ['decisionmakerboughtin', 'Decision Maker Bought-In'],
  ['contractsent', 'Contract Sent'],
  ['closedwon', 'Closed Won'],
  ['closedlost', 'Closed Lost'],
];

export const INDUSTRIES: [string, string][] = [
  ['COMPUTER_SOFTWARE', 'Computer Software'],
  ['INFORMATION_TECHNOLOGY_AND_SERVICES', 'Information Technology and Services'],
  ['FINANCIAL_SERVICES', 'Financial Services'],
  ['HOSPITAL_HEALTH_CARE', 'Hospital & Health Care'],
  ['RETAIL', 'Retail'],
  ['MARKETING_AND_ADVERTISING', 'Marketing and Advertising'],
  ['LOGISTICS_AND_SUPPLY_CHAIN', 'Logistics and Supply Chain'],
  ['EDUCATION_MANAGEMENT', 'Education Management'],
];

const SYSTEM: Short[] = [
  {
    name: 'hs_object_id',
    label: 'Record ID',
    type: 'number',
    fieldType: 'number',
    readOnly: true,
    unique: true,
  },
  { name: 'createdate', label: 'Create Date', type: 'datetime', fieldType: 'date', readOnly: true },
];

const DEFINITIONS: Record<ObjectType, Short[]> = {
  contacts: [
    ...SYSTEM,
    {
      name: 'lastmodifieddate',
      label: 'Last Modified Date',
      type: 'datetime',
      fieldType: 'date',
      readOnly: true,
    },
    { name: 'email', label: 'Email', unique: true },
    { name: 'firstname', label: 'First Name' },
    { name: 'lastname', label: 'Last Name' },
    { name: 'phone', label: 'Phone Number', type: 'string', fieldType: 'phonenumber' },
    { name: 'mobilephone', label: 'Mobile Phone Number', type: 'string', fieldType: 'phonenumber' },
    { name: 'company', label: 'Company Name' },
    { name: 'jobtitle', label: 'Job Title' },
    { name: 'website', label: 'Website URL' },
    { name: 'city', label: 'City' },
    { name: 'country', label: 'Country/Region' },
    { name: 'lifecyclestage', label: 'Lifecycle Stage', type: 'enumeration', options: LIFECYCLE_STAGES },
    {
      name: 'hs_lead_status',
      label: 'Lead Status',
      type: 'enumeration',
      options: [
        ['NEW', 'New'],
        ['OPEN', 'Open'],
        ['IN_PROGRESS', 'In Progress'],
        ['OPEN_DEAL', 'Open Deal'],
        ['UNQUALIFIED', 'Unqualified'],
        ['CONNECTED', 'Connected'],
        ['BAD_TIMING', 'Bad Timing'],
      ],
    },
    {
      name: 'hs_email_optout',
      label: 'Unsubscribed from all email',
      type: 'bool',
      fieldType: 'booleancheckbox',
    },
    {
      name: 'associatedcompanyid',
      label: 'Primary Associated Company ID',
      type: 'number',
      fieldType: 'number',
    },
    { name: 'hs_merged_object_ids', label: 'Merged Record IDs', readOnly: true },
  ],
  companies: [
    ...SYSTEM,
    {
      name: 'hs_lastmodifieddate',
      label: 'Last Modified Date',
      type: 'datetime',
      fieldType: 'date',
      readOnly: true,
    },
    { name: 'name', label: 'Company name' },
    { name: 'domain', label: 'Company Domain Name' },
    { name: 'website', label: 'Website URL' },
    { name: 'industry', label: 'Industry', type: 'enumeration', options: INDUSTRIES },
    { name: 'phone', label: 'Phone Number', type: 'string', fieldType: 'phonenumber' },
    { name: 'city', label: 'City' },
    { name: 'country', label: 'Country/Region' },
    { name: 'numberofemployees', label: 'Number of Employees', type: 'number', fieldType: 'number' },
    { name: 'annualrevenue', label: 'Annual Revenue', type: 'number', fieldType: 'number' },
    { name: 'lifecyclestage', label: 'Lifecycle Stage', type: 'enumeration', options: LIFECYCLE_STAGES },
    { name: 'description', label: 'Description', fieldType: 'textarea' },
    { name: 'hs_merged_object_ids', label: 'Merged Record IDs', readOnly: true },
  ],
  deals: [
    ...SYSTEM,
    {
      name: 'hs_lastmodifieddate',
      label: 'Last Modified Date',
      type: 'datetime',
      fieldType: 'date',
      readOnly: true,
    },
    { name: 'dealname', label: 'Deal Name' },
    { name: 'amount', label: 'Amount', type: 'number', fieldType: 'number' },
    { name: 'dealstage', label: 'Deal Stage', type: 'enumeration', fieldType: 'radio', options: DEAL_STAGES },
    {
      name: 'pipeline',
      label: 'Pipeline',
      type: 'enumeration',
      fieldType: 'select',
      options: [['default', 'Sales Pipeline']],
    },
    { name: 'closedate', label: 'Close Date', type: 'datetime', fieldType: 'date' },
    {
      name: 'dealtype',
      label: 'Deal Type',
      type: 'enumeration',
      fieldType: 'radio',
      options: [
        ['newbusiness', 'New Business'],
        ['existingbusiness', 'Existing Business'],
      ],
    },
    { name: 'description', label: 'Deal Description', fieldType: 'textarea' },
    { name: 'hs_merged_object_ids', label: 'Merged Record IDs', readOnly: true },
  ],
};

/** The last-modified property differs by object: contacts have `lastmodifieddate`. */
export const LAST_MODIFIED: Record<ObjectType, string> = {
  contacts: 'lastmodifieddate',
  companies: 'hs_lastmodifieddate',
  deals: 'hs_lastmodifieddate',
};

/** Returned when a read names no `properties` (HubSpot's documented defaults). */
export const DEFAULT_READ_PROPERTIES: Record<ObjectType, string[]> = {
  contacts: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
  companies: ['createdate', 'domain', 'hs_lastmodifieddate', 'hs_object_id', 'name'],
  deals: [
    'amount',
    'closedate',
    'createdate',
    'dealname',
    'dealstage',
    'hs_lastmodifieddate',
    'hs_object_id',
    'pipeline',
  ],
};

/** Properties the free-text `query` of a search looks in. */
export const QUERY_PROPERTIES: Record<ObjectType, string[]> = {
  contacts: ['email', 'firstname', 'lastname', 'phone', 'company'],
  companies: ['name', 'domain', 'website', 'phone'],
  deals: ['dealname'],
};

const GROUPS: Record<ObjectType, string> = {
  contacts: 'contactinformation',
  companies: 'companyinformation',
  deals: 'dealinformation',
};

export function defaultProperties(type: ObjectType, at: number): PropertyDef[] {
  return DEFINITIONS[type].map((s, i) => {
    const propertyType = s.type ?? 'string';
    return {
      name: s.name,
      label: s.label,
      type: propertyType,
      fieldType: s.fieldType ?? (propertyType === 'enumeration' ? 'select' : 'text'),
      groupName: s.group ?? GROUPS[type],
      description: '',
      options: (s.options ?? []).map(([value, label], j) => ({
        label,
        value,
        displayOrder: j,
        hidden: false,
      })),
      displayOrder: i,
      hasUniqueValue: s.unique ?? false,
      hidden: false,
      formField: !s.readOnly,
      calculated: false,
      hubspotDefined: true,
      readOnlyValue: s.readOnly ?? false,
      createdAt: at,
      updatedAt: at,
      archived: false,
    };
  });
}

export const PROPERTY_TYPES: PropertyType[] = [
  'string',
  'number',
  'date',
  'datetime',
  'enumeration',
  'bool',
  'phone_number',
];

export const FIELD_TYPES = [
  'booleancheckbox',
  'calculation_equation',
  'checkbox',
  'date',
  'file',
  'html',
  'number',
  'phonenumber',
  'radio',
  'select',
  'text',
  'textarea',
];

// ---------------------------------------------------------------------------------------------
// Values

/** One failed property value, in the shape HubSpot embeds in its VALIDATION_ERROR message. */
export type PropertyValueError = { name: string; error: string; message: string };

export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Normalize a written value to the string HubSpot stores, or return an error.
 * `''` (or null) clears the value. Numbers and booleans sent as JSON are accepted as HubSpot does.
 */
export function normalizeValue(
  def: PropertyDef,
  raw: unknown,
  type: ObjectType,
): { ok: true; value: string } | { ok: false; error: PropertyValueError } {
  const fail = (error: string, message: string) => ({
    ok: false as const,
    error: { name: def.name, error, message },
  });
  if (def.readOnlyValue)
    return fail('READ_ONLY_VALUE', `"${def.name}" is a read only property; its value cannot be set.`);
  if (raw === null || raw === undefined || raw === '') return { ok: true, value: '' };
  if (typeof raw === 'object')
    return fail('INVALID_VALUE', `${JSON.stringify(raw)} is not a valid value for ${def.name}`);
  const text = String(raw);
  switch (def.type) {
    case 'number': {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n))
        return fail('INVALID_NUMBER', `${text} is not a valid number.`);
      return { ok: true, value: String(n) };
    }
    case 'bool': {
      const v = text.toLowerCase();
      if (v !== 'true' && v !== 'false')
        return fail('INVALID_BOOLEAN', `${text} is not a valid boolean value.`);
      return { ok: true, value: v };
    }
    case 'enumeration': {
      // Multiple checkboxes take several internal values joined by ';'.
      const values = def.fieldType === 'checkbox' ? text.split(';') : [text];
      const allowed = def.options.map((o) => o.value);
      const bad = values.find((v) => !allowed.includes(v));
      if (bad !== undefined) {
        return fail('INVALID_OPTION', `${bad} was not one of the allowed options: [${allowed.join(', ')}]`);
      }
      return { ok: true, value: text };
    }
    case 'datetime': {
      const ms = parseTimestamp(text);
      if (ms === undefined) return fail('INVALID_DATE', `${text} is not a valid datetime.`);
      return { ok: true, value: new Date(ms).toISOString() };
    }
    case 'date': {
      const ms = parseTimestamp(text);
      if (ms === undefined || ms % 86_400_000 !== 0) {
        return fail('INVALID_DATE', `${text} is not a valid date; dates must be set to midnight UTC.`);
      }
      return { ok: true, value: new Date(ms).toISOString().slice(0, 10) };
    }
    default: {
      if (type === 'contacts' && def.name === 'email') {
        if (!EMAIL_PATTERN.test(text)) return fail('INVALID_EMAIL', `Email address ${text} is invalid`);
        // HubSpot stores emails in lower case (and so dedupes case-insensitively).
        return { ok: true, value: text.trim().toLowerCase() };
      }
      return { ok: true, value: text };
    }
  }
}

/** Epoch ms or ISO 8601 (HubSpot accepts both for date and datetime values and filters). */
export function parseTimestamp(text: string): number | undefined {
  if (/^-?\d+$/.test(text.trim())) return Number(text.trim());
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
