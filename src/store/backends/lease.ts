/**
 * A lease: which instance runs a fleet-wide job (the preview sweep) now. One small object
 * `leases/<name>` = {"holder", "expires_at"}, taken with a conditional create or a
 * conditional replace of an expired (or our own) lease, so one holder at a time where the
 * store's conditional writes are atomic. Where they are not, two instances may both hold
 * it for a moment: jobs run under a lease must be harmless twice (the sweep is).
 */
import { leaseKey } from './keys.js';
import type { ObjectStore } from './types.js';

export interface LeaseState {
  holder: string;
  expiresAt: number;
}

const MAX_LEASE_BYTES = 4096;

function parseLease(body: Buffer): LeaseState | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as { holder?: unknown; expires_at?: unknown };
    if (typeof value.holder !== 'string' || typeof value.expires_at !== 'number') return undefined;
    return { holder: value.holder, expiresAt: value.expires_at };
  } catch {
    return undefined; // unreadable: treated as expired
  }
}

const serialise = (lease: LeaseState): string => JSON.stringify({ holder: lease.holder, expires_at: lease.expiresAt });

/** Takes or renews the lease for `ttlMs`; false when another holder's lease is still running. */
export async function acquireLease(store: ObjectStore, name: string, holder: string, ttlMs: number, now: () => number = Date.now): Promise<boolean> {
  const key = leaseKey(name);
  const current = await store.get(key, { maxBytes: MAX_LEASE_BYTES });
  const next = serialise({ holder, expiresAt: now() + ttlMs });
  if (current === undefined) return (await store.put(key, next, { ifNoneMatch: '*' })).written;
  const lease = parseLease(current.body);
  if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now()) return false;
  return (await store.put(key, next, { ifMatch: current.etag })).written;
}

/** Gives the lease up (when `holder` has it), so another instance need not wait for it to expire. */
export async function releaseLease(store: ObjectStore, name: string, holder: string): Promise<void> {
  const key = leaseKey(name);
  const current = await store.get(key, { maxBytes: MAX_LEASE_BYTES });
  if (current === undefined || parseLease(current.body)?.holder !== holder) return;
  await store.put(key, serialise({ holder, expiresAt: 0 }), { ifMatch: current.etag });
}

/** Who holds the lease now, if anyone. */
export async function readLease(store: ObjectStore, name: string, now: () => number = Date.now): Promise<LeaseState | undefined> {
  const current = await store.get(leaseKey(name), { maxBytes: MAX_LEASE_BYTES });
  const lease = current === undefined ? undefined : parseLease(current.body);
  return lease !== undefined && lease.expiresAt > now() ? lease : undefined;
}
