import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * AES-256-GCM for connection secrets at rest. The key is 32 bytes, base64 (LOCKSTEP_SECRET_KEY or
 * the generated key file). Output: v1.<iv>.<tag>.<ciphertext>, base64url parts; a wrong key or any
 * tampering fails authentication instead of returning garbage.
 */
export function createSecretBox(base64Key: string) {
  const key = Buffer.from(base64Key, 'base64');
  if (key.length !== 32) {
    throw new Error('LOCKSTEP_SECRET_KEY must be 32 bytes in base64 (for example: openssl rand -base64 32).');
  }
  // A key of its own for MACs (unguessable URLs), derived so the encryption key is never reused as-is.
  const macKey = createHmac('sha256', key).update('lockstep-mac-v1').digest();
  return {
    /** A MAC of `text` (base64url, 32 characters): for addresses only this server can make. */
    mac(text: string): string {
      return createHmac('sha256', macKey).update(text).digest('base64url').slice(0, 32);
    },
    seal(value: unknown): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), data]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open<T = unknown>(sealed: string): T {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('Not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
