import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../sdk/connector';
import { DEFAULT_CONNECT_TIMEOUT_MS, parseConnectionString, poolConfig } from './connection';

describe('poolConfig timeouts', () => {
  it('gives connection strings the connect timeout (pg would otherwise wait forever)', () => {
    const config = poolConfig({ connectionString: 'postgres://u:p@db.example.com:5433/app' });
    expect(config).toMatchObject({
      host: 'db.example.com',
      port: 5433,
      database: 'app',
      user: 'u',
      password: 'p',
      connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS,
    });
    expect(config).not.toHaveProperty('connectionString');
    expect(poolConfig({ host: 'h', database: 'd', user: 'u' }).connectionTimeoutMillis).toBe(
      DEFAULT_CONNECT_TIMEOUT_MS,
    );
  });

  it('sets the query timeouts asked for, which the string cannot turn off', () => {
    const config = poolConfig(
      { connectionString: 'postgres://u:p@h/app?statement_timeout=0&query_timeout=0&application_name=x' },
      { connectMs: 1000, queryMs: 2000 },
    );
    expect(config).toMatchObject({
      connectionTimeoutMillis: 1000,
      query_timeout: 2000,
      statement_timeout: 2000,
      application_name: 'x',
    });
  });

  it('keeps the string over the ssl item, as pg does', () => {
    expect(poolConfig({ connectionString: 'postgres://u@h/app?sslmode=disable', ssl: 'require' }).ssl).toBe(
      false,
    );
    expect(poolConfig({ connectionString: 'postgres://u@h/app', ssl: 'require' }).ssl).toEqual({
      rejectUnauthorized: true,
    });
  });
});

describe('parseConnectionString', () => {
  it('refuses what pg cannot read with a validation error saying what is wrong', () => {
    for (const [text, why] of [
      ['postgres://u:p@[::1/app', /not valid \(Invalid URL\)/],
      ['postgres://u:p@host:notaport/app', /not valid/],
      ['not a url', /must start with postgres:\/\//],
      ['mysql://u@h/app', /must start with postgres:\/\//],
    ] as const) {
      let caught: unknown;
      try {
        parseConnectionString(text);
      } catch (error) {
        caught = error;
      }
      expect(caught, text).toBeInstanceOf(ConnectorError);
      expect((caught as ConnectorError).code).toBe('validation');
      expect((caught as ConnectorError).userFacingMessage).toMatch(why);
    }
    expect(parseConnectionString('socket:/var/run/postgresql?db=app')).toMatchObject({ database: 'app' });
    expect(parseConnectionString('/tmp app')).toMatchObject({ host: '/tmp' });
  });
});
