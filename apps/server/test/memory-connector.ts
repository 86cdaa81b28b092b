import { ConnectorError, type TableConnector, type WriteResult } from '@lockstep/connectors';
import type { CanonicalValue } from '@lockstep/engine';
import { MemoryApp } from '@lockstep/engine/testing';

/**
 * The engine's in-memory test apps behind the connector interface, standing in for real connectors
 * in the runtime's integration tests (the database and the job queue stay real). One MemoryApp per
 * table; `reject` refuses values as an app would (per item, with a message); `failAuth` refuses all.
 */
export class MemoryBackend {
  readonly tables = new Map<string, MemoryApp>();
  reject: (fields: Record<string, CanonicalValue>) => string | null = () => null;
  failAuth = false;
  /** Throws after this many item writes from now, as a process that dies mid-run. */
  private crashAt: number | null = null;
  private written = 0;

  crashAfterWrites(n: number | null) {
    this.crashAt = n === null ? null : this.written + n;
  }

  table(remoteId: string, normalize?: (fieldId: string, v: CanonicalValue) => CanonicalValue): MemoryApp {
    let app = this.tables.get(remoteId);
    if (!app) {
      app = new MemoryApp(`${remoteId}-`, normalize, false);
      this.tables.set(remoteId, app);
    }
    return app;
  }

  /** Reads of a whole table (from no cursor), to tell a download done again from one reused. */
  fullReads = 0;

  connector(batchSize = 10): TableConnector {
    return {
      capabilities: { batchSize, incrementalRead: true, deleteDetection: 'events', webhooks: false },
      read: async (tableRemoteId, cursor) => {
        if (this.failAuth)
          throw new ConnectorError('auth_invalid', '401 from app', 'The app refused the saved credentials.');
        const app = this.table(tableRemoteId);
        if (cursor === null) this.fullReads++;
        const end = app.cursor;
        const page = app.read(cursor === null ? null : Number(cursor));
        return { ...page, nextCursor: String(end), hasMore: false, scanComplete: cursor === null };
      },
      write: async (tableRemoteId, requests) => {
        const app = this.table(tableRemoteId);
        const results: WriteResult[] = [];
        for (const r of requests) {
          if (this.crashAt !== null && this.written >= this.crashAt)
            throw new Error('process killed mid-run');
          this.written++;
          const refusal = r.kind === 'delete' ? null : this.reject(r.fields);
          if (refusal) {
            results.push({
              ok: false,
              error: { code: 'validation', message: refusal, userFacingMessage: refusal },
            });
            continue;
          }
          if (r.kind === 'create') {
            const post = app.create(r.fields, r.idempotencyKey);
            results.push({ ok: true, remoteId: post.id, postImage: post });
          } else if (r.kind === 'update') {
            const post = app.update(r.remoteId, r.fields);
            results.push(
              post
                ? { ok: true, remoteId: post.id, postImage: post }
                : {
                    ok: false,
                    error: {
                      code: 'not_found',
                      message: 'gone',
                      userFacingMessage: 'The record no longer exists.',
                    },
                  },
            );
          } else {
            app.delete(r.remoteId);
            results.push({ ok: true, remoteId: r.remoteId, postImage: null });
          }
        }
        return results;
      },
    };
  }
}
