/**
 * A realistic small membership app in test mode: 40 members who signed up over the 90 days
 * before the simulator's clock, with names, companies and roles in custom fields, where they came
 * from in metaData, the free Community or Newsletter plan, and a few on the paid Pro or Team plans
 * (with Stripe payment details, as Memberstack reports them). Deterministic apart from the id
 * generator (seed it with `idSeed`).
 */
import type { Member, MemberstackState, Mode, PlanConnection } from './model.ts';

export type MemberSeed = { members: string[] };

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Moreau', 'Okafor', 'Lindqvist', 'Sato'];
const COMPANIES: [string, string, string][] = [
  ['Acme Analytics', 'acme-analytics.com', 'United States'],
  ['Northwind Traders', 'northwind.example', 'United States'],
  ['Globex Logistics', 'globex-logistics.com', 'Netherlands'],
  ['Initech Finance', 'initech.io', 'United Kingdom'],
  ['Umbrella Health', 'umbrella-health.org', 'Canada'],
  ['Stark Studios', 'starkstudios.co', 'Germany'],
  ['Hooli Cloud', 'hooli.cloud', 'Ireland'],
  ['Soylent Foods', 'soylentfoods.com', 'France'],
];
const TITLES = ['Founder', 'Head of Growth', 'Product Manager', 'Designer', 'Engineer', 'Community Lead'];
const SOURCES = ['webflow-signup', 'import', 'referral', 'webinar'];

const DAY = 86_400_000;

function paidConnection(state: MemberstackState, planId: string, paidAt: number, i: number): PlanConnection {
  const plan = state.plan(planId);
  const period = plan?.interval === 'year' ? 365 * DAY : 30 * DAY;
  return {
    id: state.newId('con'),
    planId,
    status: 'ACTIVE',
    active: true,
    type: 'SUBSCRIPTION',
    payment: {
      amount: (plan?.amount ?? 0) / 100,
      currency: plan?.currency ?? 'usd',
      status: 'PAID',
      lastBillingDate: Math.floor(paidAt / 1000),
      nextBillingDate: Math.floor((paidAt + period) / 1000),
      cancelAtDate: null,
      lastInvoice: `in_1Sim${String(i).padStart(4, '0')}Invoice`,
      lastReceipt: `https://pay.stripe.com/receipts/sim_${i}`,
      card: ['visa', 'mastercard', 'amex'][i % 3] as string,
    },
  };
}

function freeConnection(state: MemberstackState, planId: string): PlanConnection {
  return { id: state.newId('con'), planId, status: 'ACTIVE', active: true, type: 'FREE', payment: null };
}

export function seedMembers(
  state: MemberstackState,
  options: { members?: number; mode?: Mode } = {},
): MemberSeed {
  const wanted = options.members ?? 40;
  const mode = options.mode ?? 'sandbox';
  const now = state.clock.now();
  const start = now - 90 * DAY;
  const [community, newsletter, pro, team] = state.plans;
  const seed: MemberSeed = { members: [] };
  for (let i = 0; i < wanted; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[Math.floor(i / FIRST.length) % LAST.length] as string;
    const [company, domain, country] = COMPANIES[i % COMPANIES.length] as [string, string, string];
    // Past 40 members the names repeat, so a number keeps the emails unique.
    const suffix = i < FIRST.length * LAST.length ? '' : String(i);
    const createdAt = start + Math.floor((i * 88 * DAY) / Math.max(wanted, 1)) + (i % 7) * 3_600_000;
    const connections: PlanConnection[] = [];
    if (community?.free) connections.push(freeConnection(state, community.id));
    if (i % 4 === 1 && newsletter?.free) connections.push(freeConnection(state, newsletter.id));
    if (i % 5 === 2 && pro && !pro.free) connections.push(paidConnection(state, pro.id, createdAt + DAY, i));
    if (i % 13 === 6 && team && !team.free)
      connections.push(paidConnection(state, team.id, createdAt + DAY, i));
    const paid = connections.some((c) => c.type !== 'FREE');
    const fields: Partial<Member> & Pick<Member, 'email' | 'mode'> = {
      mode,
      email: `${first}.${last}${suffix}@${domain}`.toLowerCase(),
      password: 'seeded-password',
      verified: i % 3 !== 2,
      customFields: {
        'first-name': first,
        'last-name': last,
        company,
        'job-title': TITLES[i % TITLES.length] as string,
        ...(i % 2 === 0 ? { phone: `+1 555 01${String(i % 100).padStart(2, '0')}` } : {}),
        country,
      },
      metaData: {
        source: SOURCES[i % SOURCES.length] as string,
        ...(i % 6 === 0 ? { newsletterOptIn: true } : {}),
      },
      json: i % 4 === 0 ? { preferences: { theme: i % 8 === 0 ? 'dark' : 'light', digest: 'weekly' } } : {},
      loginRedirect: paid ? '/dashboard/pro' : '/dashboard',
      stripeCustomerId: paid ? `cus_Sim${String(i).padStart(10, '0')}` : null,
      lastLogin: i % 5 === 4 ? null : Math.min(now, createdAt + ((i * 5) % 30) * DAY),
      createdAt,
      planConnections: connections,
    };
    // Only the fields this app defines (the `customFields` option may name others).
    const known = new Set(state.customFields.map((f) => f.key));
    fields.customFields = Object.fromEntries(
      Object.entries(fields.customFields ?? {}).filter(([k]) => known.has(k)),
    );
    seed.members.push(state.insert(fields).id);
  }
  return seed;
}
