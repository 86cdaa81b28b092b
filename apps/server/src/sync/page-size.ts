import type { TableConnector } from '@lockstep/connectors';

/** Records read per page; a side whose connector writes bigger batches reads pages that size. */
const PAGE_SIZE = 500;
export const pageSizeOf = (c: TableConnector) => Math.max(PAGE_SIZE, c.capabilities.batchSize);
