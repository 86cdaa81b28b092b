import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ConnectorError, checkHost, publicOnlyLookup } from '@lockstep/connectors';
import type { ApiAuth } from '@lockstep/contract';

/** Each request to a user's API: 10 s from sending to the last byte of the answer. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** An answer larger than this (after decompression) is refused. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const MAX_REDIRECTS = 5;

export type ApiRequestFailure = 'refused' | 'timeout' | 'too_large' | 'http_status' | 'not_json' | 'network';

/** A request to the user's API that did not give JSON, with a sentence for the user. */
export class ApiRequestError extends Error {
  constructor(
    readonly kind: ApiRequestFailure,
    message: string,
    readonly userFacingMessage: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export type OutboundOptions = {
  /** Local and test mode: the user's own machine and network may be called. */
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
};

export type OutboundRequest = {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string | null;
};

export type OutboundResponse = {
  status: number;
  /** The address that answered (after redirects). */
  url: string;
  headers: http.IncomingHttpHeaders;
  json: unknown;
};

/** The headers a request is sent with: the user's, then the auth's (which wins). */
export function requestHeaders(headers: Record<string, string>, auth: ApiAuth): Record<string, string> {
  const out: Record<string, string> = { accept: 'application/json', ...headers };
  const set = (name: string, value: string) => {
    for (const k of Object.keys(out)) if (k.toLowerCase() === name.toLowerCase()) delete out[k];
    out[name] = value;
  };
  if (auth.type === 'bearer') set('authorization', `Bearer ${auth.token}`);
  if (auth.type === 'basic')
    set('authorization', `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`);
  if (auth.type === 'api_key') set(auth.header, auth.value);
  return out;
}

/**
 * One call to a user's API answering JSON. Outside local mode the host must be public: checked
 * before sending (IP literals, names) and again by the socket's lookup (a name re-resolving to a
 * private address, DNS rebinding). Redirects are followed (at most 5, each checked the same way;
 * the user's headers are not sent to another origin). 10 s and 10 MB at most.
 */
export async function requestJson(
  request: OutboundRequest,
  options: OutboundOptions,
): Promise<OutboundResponse> {
  let url = parseUrl(request.url);
  let method = request.method;
  let body = request.body ?? null;
  let headers = request.headers;
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    const answer = await once({ method, url, headers, body }, options);
    const location = answer.location;
    if (location === null) return answer.response();
    if (hop >= MAX_REDIRECTS)
      throw new ApiRequestError(
        'network',
        `more than ${MAX_REDIRECTS} redirects from ${request.url}`,
        `The API redirected more than ${MAX_REDIRECTS} times. Use the final address.`,
      );
    const next = parseUrl(new URL(location, url).toString());
    // Credentials go to the origin the user named, never to where a redirect points elsewhere.
    if (next.origin !== origin) headers = { accept: 'application/json' };
    if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
      method = 'GET';
      body = null;
    }
    url = next;
  }
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ApiRequestError('refused', `bad URL ${text}`, `"${text}" is not a valid address.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ApiRequestError(
      'refused',
      `bad protocol ${url.protocol}`,
      'Only http and https addresses can be called.',
    );
  return url;
}

type Answer = { status: number; location: string | null; response: () => OutboundResponse };

async function once(
  request: { method: string; url: URL; headers: Record<string, string>; body: string | null },
  options: OutboundOptions,
): Promise<Answer> {
  const { url } = request;
  if (!options.allowPrivate) {
    const check = await checkHost(url.hostname, { allowPrivate: false });
    if (!check.ok) throw refused(check.error);
  }
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  const client = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = {
    'user-agent': 'Lockstep-API-Import/1',
    'accept-encoding': 'gzip, deflate, br',
    ...request.headers,
  };
  if (request.body !== null && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';

  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(toRequestError(error, url));
    };
    const req = client.request(
      url,
      {
        method: request.method,
        headers,
        ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup() }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.resume();
          settled = true;
          clearTimeout(timer);
          resolve({
            status,
            location,
            response: () => ({ status, url: url.toString(), headers: res.headers, json: null }),
          });
          return;
        }
        let stream: Readable = res;
        const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
        if (encoding === 'gzip' || encoding === 'x-gzip') stream = res.pipe(zlib.createGunzip());
        else if (encoding === 'deflate') stream = res.pipe(zlib.createInflate());
        else if (encoding === 'br') stream = res.pipe(zlib.createBrotliDecompress());
        const declared = Number(res.headers['content-length']);
        if (encoding === '' && Number.isFinite(declared) && declared > maxBytes)
          return fail(new ApiRequestError('too_large', `content-length ${declared}`, tooLarge(maxBytes)));
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes)
            return fail(new ApiRequestError('too_large', `over ${maxBytes} bytes`, tooLarge(maxBytes)));
          chunks.push(chunk);
        });
        stream.on('error', fail);
        res.on('error', fail);
        stream.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status,
            location: null,
            response: () => {
              if (status < 200 || status >= 300)
                throw new ApiRequestError(
                  'http_status',
                  `${status} from ${url}`,
                  `The API answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}${
                    text.trim() ? `: ${text.trim().slice(0, 300)}` : ''
                  }`,
                  status,
                );
              try {
                return { status, url: url.toString(), headers: res.headers, json: JSON.parse(text) };
              } catch {
                throw new ApiRequestError(
                  'not_json',
                  `not JSON from ${url}`,
                  `The API did not answer JSON (it began: ${JSON.stringify(text.trim().slice(0, 80))}).`,
                  status,
                );
              }
            },
          });
        });
      },
    );
    const timer = setTimeout(
      () =>
        fail(
          new ApiRequestError(
            'timeout',
            `no answer from ${url} in ${timeoutMs} ms`,
            `The API did not answer within ${Math.round(timeoutMs / 1000)} seconds.`,
          ),
        ),
      timeoutMs,
    );
    req.on('error', fail);
    if (request.body !== null) req.write(request.body);
    req.end();
  });
}

const tooLarge = (maxBytes: number) =>
  `The API's answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MB. Ask for smaller pages.`;

function refused(error: ConnectorError): ApiRequestError {
  return new ApiRequestError('refused', error.message, error.userFacingMessage);
}

function toRequestError(error: unknown, url: URL): ApiRequestError {
  if (error instanceof ApiRequestError) return error;
  if (error instanceof ConnectorError) return refused(error);
  const code = (error as { code?: string }).code ?? '';
  const what =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? `The host "${url.hostname}" could not be found. Check the address.`
      : code === 'ECONNREFUSED'
        ? `${url.host} refused the connection.`
        : `The API could not be reached (${code || (error instanceof Error ? error.message : String(error))}).`;
  return new ApiRequestError('network', `${url}: ${code || String(error)}`, what);
}
