/** The payment gateway client: token, wallet balances and pagination, hardened against a misbehaving gateway. */
export { createGatewayClient } from './gateway-client.js';
export type {
  BalanceListing,
  BalancePage,
  CapturedBalances,
  UnconfirmedWallet,
  GatewayClient,
  GatewayClientOptions,
  PageProgress,
  WalletBalance,
} from './gateway-types.js';
export { findLinks, parseLinkHeader, type LinkValue, type ResolvedLink } from './link-header-parser.js';
export { GatewayRateLimits, processRateLimits, RateLimiter, type LimiterClock } from './rate-limiter.js';
export { paginate, type FetchedPage, type Page, type PaginateOptions } from './paginate.js';
