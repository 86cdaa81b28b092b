import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

const argv = ['node', 'server'];

describe('the listen address', () => {
  it('is this machine only on the embedded default, every address with a PostgreSQL server, and HOST when set', () => {
    expect(loadConfig({}, argv).host).toBe('127.0.0.1');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/lockstep' }, argv).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }, argv).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1', DATABASE_URL: 'postgres://db/lockstep' }, argv).host).toBe('::1');
  });
});
