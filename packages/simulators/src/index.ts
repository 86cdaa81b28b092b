export {
  type AirtableSimulator,
  AirtableState,
  DEFAULT_TOKEN as AIRTABLE_DEFAULT_TOKEN,
  type StartAirtableSimulatorOptions,
  seedCrm,
  startAirtableSimulator,
} from './airtable/index.ts';
export {
  type Clock,
  type Fault,
  FaultInjector,
  ManualClock,
  RequestLog,
  type SimRequest,
  type SimResponse,
  startHttpServer,
  systemClock,
  TokenRegistry,
} from './http.ts';
