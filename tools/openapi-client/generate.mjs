// Generates the client's types from an OpenAPI document (the one the server serves), with the
// openapi-typescript and TypeScript 5 of this folder: the repository's own TypeScript (7) has no
// compiler API for it.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
export const GENERATED = path.join(here, 'generated', 'api.d.ts');
export const TSC = path.join(here, 'node_modules', '.bin', 'tsc');
export const PROJECT = path.join(here, 'tsconfig.json');

/** Writes generated/api.d.ts from the document; throws where openapi-typescript refuses it. */
export async function writeClientTypes(document) {
  const ast = await openapiTS(document);
  await mkdir(path.dirname(GENERATED), { recursive: true });
  await writeFile(GENERATED, astToString(ast));
  return GENERATED;
}
