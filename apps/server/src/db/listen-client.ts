import { DropTolerantClient } from '@lockstep/connectors/postgresql';
import type pg from 'pg';

export type ListenClient = {
  /** The connection while it is up (null while reconnecting): for other queries on the session. */
  current(): pg.Client | null;
  close(): Promise<void>;
};

const MAX_BACKOFF_MS = 30_000;

/**
 * A connection that LISTENs on `channels` and stays listening: when the server drops it (a restart,
 * pg_terminate_backend), it connects again with backoff and LISTENs again, then calls `onReconnect`
 * because notifications sent while it was away are lost. The first connect's failure is thrown to
 * the caller; after that it retries until closed.
 */
export async function openListenClient(options: {
  config: pg.ClientConfig;
  channels: string[];
  onNotification: (msg: pg.Notification) => void;
  onReconnect: () => void;
  log?: (line: string) => void;
  firstBackoffMs?: number;
}): Promise<ListenClient> {
  const firstBackoff = options.firstBackoffMs ?? 500;
  let client: pg.Client | null = null;
  let closed = false;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;

  async function connect(): Promise<void> {
    const next = new DropTolerantClient(options.config);
    next.on('notification', options.onNotification);
    // 'error' comes first with the reason, then 'end'; either one means the session is gone.
    next.on('error', (error) => lost(next, error.message));
    next.on('end', () => lost(next, 'connection ended'));
    client = next;
    try {
      await next.connect();
      for (const channel of options.channels) await next.query(`listen "${channel.replaceAll('"', '""')}"`);
    } catch (error) {
      next.removeAllListeners();
      next.on('error', () => {});
      if (client === next) client = null;
      await next.end().catch(() => {});
      throw error;
    }
    attempt = 0;
  }

  function lost(target: pg.Client, reason: string) {
    if (closed || client !== target) return;
    client = null;
    target.removeAllListeners('notification');
    void target.end().catch(() => {});
    options.log?.(`LISTEN connection lost (${reason}); reconnecting`);
    retry();
  }

  function retry() {
    if (closed || retryTimer) return;
    const backoff = Math.min(MAX_BACKOFF_MS, firstBackoff * 2 ** Math.min(attempt, 6));
    attempt++;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect().then(
        () => {
          if (!closed) options.onReconnect();
        },
        () => retry(),
      );
    }, backoff);
    retryTimer.unref?.();
  }

  await connect();
  return {
    current: () => client,
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      const last = client;
      client = null;
      await last?.end().catch(() => {});
    },
  };
}
