/**
 * The emulator's wallets: real ISO 4217 codes, then synthetic ones, with balances drawn from a
 * seeded generator so a seed always yields the same wallets on every machine.
 */

export interface SandboxWallet {
  currency: string;
  balance: bigint;
}

/** 2^53 + 1: the smallest positive integer a JavaScript Number cannot hold, so lossy parsing shows. */
export const UNSAFE_BALANCE = 9_007_199_254_740_993n;

// Majors first so a small sandbox (the default 12 wallets) looks like a real merchant account.
const MAJOR_CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'NZD', 'CNY', 'HKD', 'SGD', 'SEK', 'NOK', 'DKK', 'PLN', 'INR'];

// Circulating ISO 4217 codes; fund codes, metals and testing codes (XAU, XTS, XXX…) are left out.
const OTHER_CURRENCIES = `
  AED AFN ALL AMD AOA ARS AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD
  CDF CLF CLP COP COU CRC CUP CVE CZK DJF DOP DZD EGP ERN ETB FJD FKP GEL GHS GIP GMD GNF GTQ GYD
  HNL HTG HUF IDR ILS IQD IRR ISK JMD JOD KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL
  LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NPR OMR PAB PEN PGK
  PHP PKR PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT
  TND TOP TRY TTD TWD TZS UAH UGX USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER
  ZAR ZMW ZWG`
  .trim()
  .split(/\s+/);

/** The ISO 4217 codes the emulator hands out, in the order wallets are created. */
export const ISO_CURRENCIES: readonly string[] = Object.freeze([...MAJOR_CURRENCIES, ...OTHER_CURRENCIES.filter((c) => !MAJOR_CURRENCIES.includes(c))]);

/** How many wallets the emulator can create: every three-letter uppercase code. */
export const MAX_WALLETS = 26 ** 3;

/** Whether a string has the shape the interface gives currency codes: three uppercase letters. */
export function isCurrencyCode(value: string): boolean {
  return /^[A-Z]{3}$/.test(value);
}

/** mulberry32: tiny, fast and identical everywhere; returns a generator of floats in [0, 1). */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The first `count` currency codes: ISO codes first, then synthetic AAA, AAB… skipping the ISO ones. */
export function currencyCodes(count: number): string[] {
  const codes = ISO_CURRENCIES.slice(0, count);
  if (codes.length === count) return codes;
  const taken = new Set(ISO_CURRENCIES);
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (let i = 0; i < MAX_WALLETS && codes.length < count; i++) {
    const code = letters[Math.floor(i / 676)]! + letters[Math.floor(i / 26) % 26]! + letters[i % 26]!;
    if (!taken.has(code)) codes.push(code);
  }
  return codes;
}

function randomBalance(random: () => number): bigint {
  const roll = random();
  if (roll < 0.06) return 0n;
  // Magnitudes from single units to ~10^18, so amounts of every width appear in reports.
  const digits = 1 + Math.floor(random() * 18);
  let magnitude = 0n;
  for (let i = 0; i < digits; i++) magnitude = magnitude * 10n + BigInt(Math.floor(random() * 10));
  return roll < 0.2 ? -magnitude : magnitude;
}

/**
 * Deterministic wallets for a seed, sorted by currency code. At least one balance is exactly
 * 2^53 + 1, and with three wallets or more a zero and a negative balance always appear.
 * @example generateWallets(12, 1) // the default sandbox account
 */
export function generateWallets(count: number, seed: number): SandboxWallet[] {
  if (!Number.isInteger(count) || count < 0 || count > MAX_WALLETS) {
    throw new RangeError(`wallet count must be an integer from 0 to ${MAX_WALLETS} (got ${count})`);
  }
  const random = createRandom(seed);
  const wallets = currencyCodes(count).map((currency) => ({ currency, balance: randomBalance(random) }));
  // Edge cases land on seeded positions so they move with the seed but never go missing.
  const positions = wallets.map((_, i) => i);
  for (let i = positions.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [positions[i], positions[j]] = [positions[j]!, positions[i]!];
  }
  const [unsafe, zero, negative] = positions;
  if (unsafe !== undefined) wallets[unsafe]!.balance = UNSAFE_BALANCE;
  if (zero !== undefined && negative !== undefined) {
    const rest = wallets.filter((_, i) => i !== unsafe && i !== zero && i !== negative);
    if (!rest.some((w) => w.balance === 0n)) wallets[zero]!.balance = 0n;
    if (!rest.some((w) => w.balance < 0n)) wallets[negative]!.balance = -(1n + BigInt(Math.floor(random() * 1_000_000_000)));
  }
  return wallets.sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

// Roughly how many units of each currency one US dollar buys, so a merchant's wallets hold
// comparable value (¥150 for $1): only for plausible figures, never used to convert anything.
const UNITS_PER_DOLLAR: Readonly<Record<string, number>> = { JPY: 150, INR: 85, SEK: 10, NOK: 10, DKK: 7, CNY: 7, HKD: 8, PLN: 4 };

/**
 * Deterministic wallets a mid-size merchant would hold: positive balances worth about USD 2,000
 * to 2.5 million each, in the currency's own decimals (ISO 4217; 2 for a synthetic code), so the
 * demo reads like a real account. The edge cases (2^53 + 1, zero, negative) stay with
 * `generateWallets`, which the tests use.
 * @example generateMerchantWallets(12, 1) // the demo's account
 */
export function generateMerchantWallets(count: number, seed: number, decimalsOf: (currency: string) => number | null): SandboxWallet[] {
  if (!Number.isInteger(count) || count < 0 || count > MAX_WALLETS) {
    throw new RangeError(`wallet count must be an integer from 0 to ${MAX_WALLETS} (got ${count})`);
  }
  const random = createRandom(seed);
  return currencyCodes(count)
    .map((currency) => {
      // Log-uniform between 2,000 and 2,500,000 dollars' worth: a few large wallets, most smaller.
      const dollars = Math.round(2_000 * Math.pow(1_250, random()));
      const major = BigInt(dollars) * BigInt(UNITS_PER_DOLLAR[currency] ?? 1);
      const decimals = decimalsOf(currency) ?? 2;
      const fraction = decimals === 0 ? 0n : BigInt(Math.floor(random() * 10 ** decimals));
      return { currency, balance: major * 10n ** BigInt(decimals) + fraction };
    })
    .sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}
