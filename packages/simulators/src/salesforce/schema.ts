/**
 * The org's object schema: Account, Contact, Lead, Opportunity and one custom object,
 * Project__c, with the field metadata `sobjects/{o}/describe` reports (REST API Developer Guide,
 * "sObject Describe"; field properties as in the SOAP API's DescribeSObjectResult/Field).
 */

export type FieldType =
  | 'id'
  | 'string'
  | 'email'
  | 'phone'
  | 'url'
  | 'textarea'
  | 'picklist'
  | 'multipicklist'
  | 'boolean'
  | 'int'
  | 'double'
  | 'currency'
  | 'percent'
  | 'date'
  | 'datetime'
  | 'reference';

export type FieldDef = {
  name: string;
  label: string;
  type: FieldType;
  length?: number;
  precision?: number;
  scale?: number;
  nillable: boolean;
  createable: boolean;
  updateable: boolean;
  calculated?: boolean;
  /** A value is filled in on insert when none is given (so the field is not required). */
  defaultedOnCreate?: boolean;
  unique?: boolean;
  externalId?: boolean;
  idLookup?: boolean;
  nameField?: boolean;
  custom?: boolean;
  picklistValues?: string[];
  defaultPicklistValue?: string;
  restrictedPicklist?: boolean;
  referenceTo?: string[];
  relationshipName?: string;
  calculatedFormula?: string;
};

export type ObjectDef = {
  name: string;
  label: string;
  labelPlural: string;
  keyPrefix: string;
  custom: boolean;
  fields: FieldDef[];
};

// ---------------------------------------------------------------------------------------------
// Field builders

type Extra = Partial<FieldDef>;

const f = (name: string, label: string, type: FieldType, extra: Extra = {}): FieldDef => ({
  name,
  label,
  type,
  nillable: true,
  createable: true,
  updateable: true,
  ...extra,
});
const text = (name: string, label: string, length = 255, extra: Extra = {}) =>
  f(name, label, 'string', { length, ...extra });
const required = { nillable: false };
const readOnly = { createable: false, updateable: false };
const picklist = (name: string, label: string, values: string[], extra: Extra = {}) =>
  f(name, label, 'picklist', { length: 255, picklistValues: values, ...extra });
const reference = (name: string, label: string, to: string, relationshipName: string, extra: Extra = {}) =>
  f(name, label, 'reference', { length: 18, referenceTo: [to], relationshipName, ...extra });
const custom = { custom: true };

/** Fields every object has: Id, owner, audit fields and IsDeleted. */
function systemFields(owned: boolean): FieldDef[] {
  const out: FieldDef[] = [
    f('Id', `Record ID`, 'id', { ...readOnly, nillable: false, length: 18, idLookup: true }),
    f('IsDeleted', 'Deleted', 'boolean', { ...readOnly, nillable: false, defaultedOnCreate: true }),
  ];
  if (owned) {
    out.push(
      reference('OwnerId', 'Owner ID', 'User', 'Owner', {
        nillable: false,
        defaultedOnCreate: true,
      }),
    );
  }
  out.push(
    f('CreatedDate', 'Created Date', 'datetime', { ...readOnly, nillable: false, defaultedOnCreate: true }),
    reference('CreatedById', 'Created By ID', 'User', 'CreatedBy', {
      ...readOnly,
      nillable: false,
      defaultedOnCreate: true,
    }),
    f('LastModifiedDate', 'Last Modified Date', 'datetime', {
      ...readOnly,
      nillable: false,
      defaultedOnCreate: true,
    }),
    reference('LastModifiedById', 'Last Modified By ID', 'User', 'LastModifiedBy', {
      ...readOnly,
      nillable: false,
      defaultedOnCreate: true,
    }),
    f('SystemModstamp', 'System Modstamp', 'datetime', {
      ...readOnly,
      nillable: false,
      defaultedOnCreate: true,
    }),
  );
  return out;
}

const INDUSTRIES = [
  'Agriculture',
  'Banking',
  'Biotechnology',
  'Communications',
  'Consulting',
  'Education',
  'Energy',
  'Engineering',
  'Finance',
  'Healthcare',
  'Manufacturing',
  'Media',
  'Retail',
  'Technology',
  'Transportation',
  'Other',
];
const LEAD_SOURCES = ['Web', 'Phone Inquiry', 'Partner Referral', 'Purchased List', 'Other'];
const RATINGS = ['Hot', 'Warm', 'Cold'];

/** Opportunity stages with their default probability and closed/won flags. */
export const OPPORTUNITY_STAGES: { value: string; probability: number; closed: boolean; won: boolean }[] = [
  { value: 'Prospecting', probability: 10, closed: false, won: false },
  { value: 'Qualification', probability: 10, closed: false, won: false },
  { value: 'Needs Analysis', probability: 20, closed: false, won: false },
  { value: 'Value Proposition', probability: 50, closed: false, won: false },
  { value: 'Id. Decision Makers', probability: 60, closed: false, won: false },
  { value: 'Perception Analysis', probability: 70, closed: false, won: false },
  { value: 'Proposal/Price Quote', probability: 75, closed: false, won: false },
  { value: 'Negotiation/Review', probability: 90, closed: false, won: false },
  { value: 'Closed Won', probability: 100, closed: true, won: true },
  { value: 'Closed Lost', probability: 0, closed: true, won: false },
];

export const LEAD_STATUSES = [
  'Open - Not Contacted',
  'Working - Contacted',
  'Closed - Converted',
  'Closed - Not Converted',
];

const ACCOUNT: ObjectDef = {
  name: 'Account',
  label: 'Account',
  labelPlural: 'Accounts',
  keyPrefix: '001',
  custom: false,
  fields: [
    ...systemFields(true),
    text('Name', 'Account Name', 255, { ...required, nameField: true }),
    picklist('Type', 'Account Type', [
      'Prospect',
      'Customer - Direct',
      'Customer - Channel',
      'Channel Partner / Reseller',
      'Installation Partner',
      'Technology Partner',
      'Other',
    ]),
    reference('ParentId', 'Parent Account ID', 'Account', 'Parent'),
    picklist('Industry', 'Industry', INDUSTRIES),
    picklist('Rating', 'Account Rating', RATINGS),
    f('Phone', 'Account Phone', 'phone', { length: 40 }),
    f('Website', 'Website', 'url', { length: 255 }),
    f('AnnualRevenue', 'Annual Revenue', 'currency', { precision: 18, scale: 0 }),
    f('NumberOfEmployees', 'Employees', 'int', { precision: 8 }),
    text('BillingCity', 'Billing City', 40),
    text('BillingCountry', 'Billing Country', 80),
    f('Description', 'Account Description', 'textarea', { length: 32000 }),
    text('External_Key__c', 'External Key', 64, {
      ...custom,
      unique: true,
      externalId: true,
      idLookup: true,
    }),
  ],
};

const CONTACT: ObjectDef = {
  name: 'Contact',
  label: 'Contact',
  labelPlural: 'Contacts',
  keyPrefix: '003',
  custom: false,
  fields: [
    ...systemFields(true),
    reference('AccountId', 'Account ID', 'Account', 'Account'),
    picklist('Salutation', 'Salutation', ['Mr.', 'Ms.', 'Mrs.', 'Dr.', 'Prof.']),
    text('FirstName', 'First Name', 40),
    text('LastName', 'Last Name', 80, required),
    text('Name', 'Full Name', 121, { ...readOnly, nillable: false, nameField: true }),
    f('Email', 'Email', 'email', { length: 80, idLookup: true }),
    f('Phone', 'Business Phone', 'phone', { length: 40 }),
    f('MobilePhone', 'Mobile Phone', 'phone', { length: 40 }),
    text('Title', 'Title', 128),
    text('Department', 'Department', 80),
    picklist('LeadSource', 'Lead Source', LEAD_SOURCES),
    f('Birthdate', 'Birthdate', 'date'),
    text('MailingCity', 'Mailing City', 40),
    text('MailingCountry', 'Mailing Country', 80),
    f('HasOptedOutOfEmail', 'Email Opt Out', 'boolean', { nillable: false, defaultedOnCreate: true }),
    f('Description', 'Contact Description', 'textarea', { length: 32000 }),
    f('Interests__c', 'Interests', 'multipicklist', {
      ...custom,
      length: 4099,
      picklistValues: ['Analytics', 'Automation', 'Integrations', 'Security', 'Training'],
      restrictedPicklist: true,
    }),
  ],
};

const LEAD: ObjectDef = {
  name: 'Lead',
  label: 'Lead',
  labelPlural: 'Leads',
  keyPrefix: '00Q',
  custom: false,
  fields: [
    ...systemFields(true),
    picklist('Salutation', 'Salutation', ['Mr.', 'Ms.', 'Mrs.', 'Dr.', 'Prof.']),
    text('FirstName', 'First Name', 40),
    text('LastName', 'Last Name', 80, required),
    text('Name', 'Full Name', 121, { ...readOnly, nillable: false, nameField: true }),
    text('Company', 'Company', 255, required),
    text('Title', 'Title', 128),
    f('Email', 'Email', 'email', { length: 80, idLookup: true }),
    f('Phone', 'Phone', 'phone', { length: 40 }),
    f('Website', 'Website', 'url', { length: 255 }),
    picklist('Status', 'Status', LEAD_STATUSES, {
      nillable: false,
      defaultedOnCreate: true,
      defaultPicklistValue: 'Open - Not Contacted',
      restrictedPicklist: true,
    }),
    picklist('LeadSource', 'Lead Source', LEAD_SOURCES),
    picklist('Industry', 'Industry', INDUSTRIES),
    picklist('Rating', 'Rating', RATINGS),
    f('AnnualRevenue', 'Annual Revenue', 'currency', { precision: 18, scale: 0 }),
    f('NumberOfEmployees', 'Employees', 'int', { precision: 8 }),
    f('IsConverted', 'Converted', 'boolean', { ...readOnly, nillable: false, defaultedOnCreate: true }),
    f('Description', 'Description', 'textarea', { length: 32000 }),
  ],
};

const OPPORTUNITY: ObjectDef = {
  name: 'Opportunity',
  label: 'Opportunity',
  labelPlural: 'Opportunities',
  keyPrefix: '006',
  custom: false,
  fields: [
    ...systemFields(true),
    reference('AccountId', 'Account ID', 'Account', 'Account'),
    text('Name', 'Name', 120, { ...required, nameField: true }),
    picklist(
      'StageName',
      'Stage',
      OPPORTUNITY_STAGES.map((s) => s.value),
      { ...required, restrictedPicklist: true },
    ),
    f('Amount', 'Amount', 'currency', { precision: 18, scale: 2 }),
    f('Probability', 'Probability (%)', 'percent', { precision: 3, scale: 0, defaultedOnCreate: true }),
    f('ExpectedRevenue', 'Expected Amount', 'currency', {
      ...readOnly,
      precision: 18,
      scale: 2,
      calculated: true,
      calculatedFormula: 'Amount * Probability / 100',
    }),
    f('CloseDate', 'Close Date', 'date', required),
    picklist('Type', 'Opportunity Type', [
      'Existing Customer - Upgrade',
      'Existing Customer - Renewal',
      'New Customer',
    ]),
    picklist('LeadSource', 'Lead Source', LEAD_SOURCES),
    text('NextStep', 'Next Step', 255),
    f('IsClosed', 'Closed', 'boolean', { ...readOnly, nillable: false, defaultedOnCreate: true }),
    f('IsWon', 'Won', 'boolean', { ...readOnly, nillable: false, defaultedOnCreate: true }),
    f('Description', 'Description', 'textarea', { length: 32000 }),
  ],
};

const PROJECT: ObjectDef = {
  name: 'Project__c',
  label: 'Project',
  labelPlural: 'Projects',
  keyPrefix: 'a01',
  custom: true,
  fields: [
    ...systemFields(true),
    text('Name', 'Project Name', 80, { ...required, nameField: true }),
    reference('Account__c', 'Account', 'Account', 'Account__r', custom),
    text('Project_Code__c', 'Project Code', 32, {
      ...custom,
      unique: true,
      externalId: true,
      idLookup: true,
    }),
    picklist('Status__c', 'Status', ['Planned', 'Active', 'On Hold', 'Done'], {
      ...custom,
      restrictedPicklist: true,
      defaultedOnCreate: true,
      defaultPicklistValue: 'Planned',
    }),
    f('Tags__c', 'Tags', 'multipicklist', {
      ...custom,
      length: 4099,
      picklistValues: ['Internal', 'Billable', 'Priority', 'Migration', 'Support'],
      restrictedPicklist: true,
    }),
    f('Start_Date__c', 'Start Date', 'date', custom),
    f('Kickoff_At__c', 'Kickoff At', 'datetime', custom),
    f('Budget__c', 'Budget', 'currency', { ...custom, precision: 16, scale: 2 }),
    f('Spent__c', 'Spent', 'currency', { ...custom, precision: 16, scale: 2 }),
    f('Completion__c', 'Completion', 'percent', { ...custom, precision: 5, scale: 2 }),
    f('Hours__c', 'Hours', 'double', { ...custom, precision: 10, scale: 1 }),
    f('Active__c', 'Active', 'boolean', { ...custom, nillable: false, defaultedOnCreate: true }),
    f('Website__c', 'Website', 'url', { ...custom, length: 255 }),
    f('Contact_Email__c', 'Contact Email', 'email', { ...custom, length: 80 }),
    f('Contact_Phone__c', 'Contact Phone', 'phone', { ...custom, length: 40 }),
    f('Notes__c', 'Notes', 'textarea', { ...custom, length: 32768 }),
    f('Is_Over_Budget__c', 'Over Budget', 'boolean', {
      ...custom,
      ...readOnly,
      nillable: false,
      calculated: true,
      calculatedFormula: 'Spent__c > Budget__c',
    }),
  ],
};

export const OBJECTS: ObjectDef[] = [ACCOUNT, CONTACT, LEAD, OPPORTUNITY, PROJECT];

export function objectDef(name: string): ObjectDef | undefined {
  const lower = name.toLowerCase();
  return OBJECTS.find((o) => o.name.toLowerCase() === lower);
}

export function fieldDef(obj: ObjectDef, name: string): FieldDef | undefined {
  const lower = name.toLowerCase();
  return obj.fields.find((fd) => fd.name.toLowerCase() === lower);
}

/** The object a record id belongs to, from its three-character key prefix. */
export function objectForId(id: string): ObjectDef | undefined {
  return OBJECTS.find((o) => id.startsWith(o.keyPrefix));
}

// ---------------------------------------------------------------------------------------------
// Describe rendering

const SOAP_TYPES: Record<FieldType, string> = {
  id: 'tns:ID',
  string: 'xsd:string',
  email: 'xsd:string',
  phone: 'xsd:string',
  url: 'xsd:string',
  textarea: 'xsd:string',
  picklist: 'xsd:string',
  multipicklist: 'xsd:string',
  boolean: 'xsd:boolean',
  int: 'xsd:int',
  double: 'xsd:double',
  currency: 'xsd:double',
  percent: 'xsd:double',
  date: 'xsd:date',
  datetime: 'xsd:dateTime',
  reference: 'tns:ID',
};

const TEXTUAL = new Set<FieldType>([
  'string',
  'email',
  'phone',
  'url',
  'textarea',
  'picklist',
  'multipicklist',
]);

export function describeField(fd: FieldDef): Record<string, unknown> {
  const textual = TEXTUAL.has(fd.type) || fd.type === 'id' || fd.type === 'reference';
  const numeric = fd.type === 'double' || fd.type === 'currency' || fd.type === 'percent';
  const longText = fd.type === 'textarea' && (fd.length ?? 0) > 255;
  return {
    aggregatable: !longText,
    autoNumber: false,
    byteLength: textual ? (fd.length ?? 0) * 3 : 0,
    calculated: fd.calculated ?? false,
    calculatedFormula: fd.calculatedFormula ?? null,
    cascadeDelete: false,
    caseSensitive: false,
    createable: fd.createable,
    custom: fd.custom ?? false,
    defaultValue: fd.defaultPicklistValue ?? (fd.type === 'boolean' && fd.createable ? false : null),
    defaultedOnCreate: fd.defaultedOnCreate ?? false,
    dependentPicklist: false,
    deprecatedAndHidden: false,
    digits: fd.type === 'int' ? (fd.precision ?? 9) : 0,
    externalId: fd.externalId ?? false,
    filterable: !longText,
    groupable: !longText && !numeric && fd.type !== 'datetime' && fd.type !== 'multipicklist',
    htmlFormatted: false,
    idLookup: fd.idLookup ?? false,
    label: fd.label,
    length: textual ? (fd.length ?? 0) : 0,
    name: fd.name,
    nameField: fd.nameField ?? false,
    nillable: fd.nillable,
    permissionable: fd.nillable && fd.createable,
    picklistValues: (fd.picklistValues ?? []).map((value) => ({
      active: true,
      defaultValue: value === fd.defaultPicklistValue,
      label: value,
      validFor: null,
      value,
    })),
    precision: numeric ? (fd.precision ?? 18) : 0,
    referenceTo: fd.referenceTo ?? [],
    relationshipName: fd.relationshipName ?? null,
    restrictedPicklist: fd.restrictedPicklist ?? false,
    scale: numeric ? (fd.scale ?? 0) : 0,
    soapType: SOAP_TYPES[fd.type],
    sortable: !longText && fd.type !== 'multipicklist',
    type: fd.type,
    unique: fd.unique ?? false,
    updateable: fd.updateable,
  };
}

export function objectUrls(obj: ObjectDef, version: string): Record<string, string> {
  const base = `/services/data/v${version}/sobjects/${obj.name}`;
  return {
    compactLayouts: `${base}/describe/compactLayouts`,
    rowTemplate: `${base}/{ID}`,
    approvalLayouts: `${base}/describe/approvalLayouts`,
    defaultValues: `${base}/defaultValues?recordTypeId&fields`,
    describe: `${base}/describe`,
    quickActions: `${base}/quickActions`,
    layouts: `${base}/describe/layouts`,
    sobject: base,
  };
}

/** The summary `sobjects` (global describe) lists for each object. */
export function describeGlobalEntry(obj: ObjectDef, version: string): Record<string, unknown> {
  return {
    activateable: false,
    createable: true,
    custom: obj.custom,
    customSetting: false,
    deepCloneable: false,
    deletable: true,
    deprecatedAndHidden: false,
    feedEnabled: !obj.custom,
    hasSubtypes: false,
    isInterface: false,
    isSubtype: false,
    keyPrefix: obj.keyPrefix,
    label: obj.label,
    labelPlural: obj.labelPlural,
    layoutable: true,
    mergeable: obj.name !== 'Opportunity' && !obj.custom,
    mruEnabled: true,
    name: obj.name,
    queryable: true,
    replicateable: true,
    retrieveable: true,
    searchable: true,
    triggerable: true,
    undeletable: true,
    updateable: true,
    urls: objectUrls(obj, version),
  };
}

export function describeObject(obj: ObjectDef, version: string): Record<string, unknown> {
  const childRelationships = OBJECTS.flatMap((child) =>
    child.fields
      .filter((fd) => fd.type === 'reference' && fd.referenceTo?.includes(obj.name))
      .map((fd) => ({
        cascadeDelete: false,
        childSObject: child.name,
        deprecatedAndHidden: false,
        field: fd.name,
        junctionIdListNames: [],
        junctionReferenceTo: [],
        relationshipName: null,
        restrictedDelete: false,
      })),
  );
  return {
    ...describeGlobalEntry(obj, version),
    actionOverrides: [],
    childRelationships,
    compactLayoutable: true,
    fields: obj.fields.map(describeField),
    listviewable: null,
    lookupLayoutable: null,
    namedLayoutInfos: [],
    networkScopeFieldName: null,
    recordTypeInfos: [],
    searchLayoutable: true,
    supportedScopes: [
      { label: 'All records', name: 'everything' },
      { label: 'My records', name: 'mine' },
    ],
    urls: { ...objectUrls(obj, version), uiDetailTemplate: null, uiEditTemplate: null, uiNewRecord: null },
  };
}
