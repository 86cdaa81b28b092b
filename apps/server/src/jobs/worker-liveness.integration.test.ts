import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, until } from '../../test/pg-pair';
import { createTestApp, type TestApp } from '../../test/test-app';
import { SYNC_RUN } from './sync-run';
import { startWorkerLiveness, type WorkerLiveness } from './worker-liveness';

// A worker process that fetched a sync-run job and died before recording its claim left a run that
// only the queue's heartbeat rescued (10-20 s, while edits piled up; once in the chaos suite). The
// test's own queue plays the dead process: it fetches jobs and never claims or finishes them.
let t: TestApp;
let url: string;
const started: WorkerLiveness[] = [];

beforeAll(async () => {
  t = await createTestApp({}, { runWorkers: false });
  // Long, so only the liveness takeover can end the fetched jobs within the test.
  await t.ctx.boss.updateQueue(SYNC_RUN, { heartbeatSeconds: 120 });
  url = databaseUrl(String((await t.ctx.pool.query('select current_database() as d')).rows[0].d));
});

afterAll(async () => {
  for (const l of started) await l.stop();
  await t.close();
});

async function fetchUnclaimed() {
  const coreBaseId = randomUUID();
  await t.ctx.boss.send(SYNC_RUN, { coreBaseId, trigger: 'change' }, { singletonKey: coreBaseId });
  const [job] = await t.ctx.boss.fetch(SYNC_RUN);
  if (!job) throw new Error('no job fetched');
  return job.id;
}

async function startWorker(taken: string[]) {
  const liveness = await startWorkerLiveness({
    db: t.ctx.db,
    boss: t.ctx.boss,
    databaseUrl: url,
    queue: SYNC_RUN,
    takeOver: async (jobId) => {
      await t.ctx.boss.cancel(SYNC_RUN, jobId);
      taken.push(jobId);
    },
  });
  started.push(liveness);
  return liveness;
}

describe('worker liveness', () => {
  it('takes over, within seconds, a job whose process died between fetching and claiming it', async () => {
    const orphan = await fetchUnclaimed();
    const taken: string[] = [];
    await startWorker(taken);
    await until(async () => taken.includes(orphan), 'the unclaimed job of a dead process taken over', 5_000);
    expect((await t.ctx.boss.getJobById(SYNC_RUN, orphan))?.state).toBe('cancelled');
  });

  it('leaves alone a job fetched after a live worker started (that worker may be about to claim it)', async () => {
    const taken: string[] = [];
    await startWorker(taken);
    const fresh = await fetchUnclaimed();
    await new Promise((r) => setTimeout(r, 2_500));
    expect(taken).not.toContain(fresh);
    expect((await t.ctx.boss.getJobById(SYNC_RUN, fresh))?.state).toBe('active');
    await t.ctx.boss.cancel(SYNC_RUN, fresh);
  });
});
