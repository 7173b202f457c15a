import { PaginationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BalancePage, PageProgress, WalletBalance } from './gateway-types.js';

/** One pass over the balance list, merged; `mismatch` says why its total cannot be trusted. */
export interface ListingPass {
  wallets: WalletBalance[];
  pagesFetched: number;
  totalReported: number | undefined;
  totalPagesReported: number | undefined;
  mismatch: string | undefined;
}

/**
 * Merges the pages of one listing. A wallet repeated with the same balance (a page boundary
 * that shifted while we read) is kept once; repeated with a different balance, the listing
 * is contradictory and fails. After the last page the distinct count is compared with X-PH-Total,
 * and the pages read with X-PH-TotalPages: a listing that stops early is incomplete even when the
 * gateway left X-PH-Total out (nothing else would tell the missing wallets).
 */
export async function collectBalancePages(
  pages: AsyncIterable<BalancePage>,
  options: {
    logger: Logger;
    where: string;
    onProgress?: ((p: PageProgress) => void) | undefined;
    /**
     * Each page's wallets once merged (a repeat included), so their single reads can start before
     * the listing ends; the next page is asked for once what it returns has settled (backpressure).
     */
    onPage?: ((items: readonly WalletBalance[]) => void | Promise<void>) | undefined;
  },
): Promise<ListingPass> {
  const byCurrency = new Map<string, { balance: bigint; page: number }>();
  const totalsSeen: number[] = [];
  let pagesFetched = 0;
  let totalReported: number | undefined;
  let totalPagesReported: number | undefined;
  for await (const page of pages) {
    pagesFetched = page.page;
    totalReported = page.totalItems;
    totalPagesReported = page.totalPages;
    if (page.totalItems !== undefined && !totalsSeen.includes(page.totalItems)) totalsSeen.push(page.totalItems);
    for (const wallet of page.items) {
      const seen = byCurrency.get(wallet.currency);
      if (seen === undefined) {
        byCurrency.set(wallet.currency, { balance: wallet.balance, page: page.page });
      } else if (seen.balance !== wallet.balance) {
        throw new PaginationError(
          `The balance list reports wallet ${wallet.currency} twice with different balances (${seen.balance} on page ${seen.page}, ${wallet.balance} on page ${page.page}); the listing cannot be trusted${options.where}.`,
        );
      } else {
        options.logger.debug({ currency: wallet.currency, page: page.page, firstPage: seen.page }, 'identical repeated wallet merged');
      }
    }
    await options.onPage?.(page.items);
    const progress: PageProgress = { page: page.page, totalPages: page.totalPages, items: byCurrency.size, totalItems: page.totalItems };
    options.logger.info({ ...progress, pageItems: page.items.length }, 'gateway balance page');
    options.onProgress?.(progress);
  }
  let mismatch: string | undefined;
  if (totalsSeen.length > 1) mismatch = `changed its X-PH-Total while being read (${totalsSeen.join(', then ')})`;
  else if (totalReported !== undefined && totalReported !== byCurrency.size) {
    mismatch = `held ${byCurrency.size} distinct wallet${byCurrency.size === 1 ? '' : 's'} but X-PH-Total said ${totalReported}`;
  } else if (totalPagesReported !== undefined && pagesFetched < totalPagesReported) {
    mismatch = `ended after ${pagesFetched} page${pagesFetched === 1 ? '' : 's'} although X-PH-TotalPages said ${totalPagesReported}`;
  }
  return {
    wallets: [...byCurrency].map(([currency, { balance }]) => ({ currency, balance })),
    pagesFetched,
    totalReported,
    totalPagesReported,
    mismatch,
  };
}
