import type { ServerResponse } from 'node:http';
import type { SandboxWallet } from './wallet-fixtures.js';

/**
 * Bodies are written by hand because balances are bigints and must reach the client as exact
 * JSON integers; JSON.stringify cannot write a bigint and a Number would round beyond 2^53.
 */
export function walletJson(wallet: SandboxWallet): string {
  return `{"currency":${JSON.stringify(wallet.currency)},"balance":${wallet.balance.toString()}}`;
}

/** The success envelope around an already serialized `data` value. */
export function successBody(message: string, dataJson: string): string {
  return `{"code":200,"status":"success","message":${JSON.stringify(message)},"data":${dataJson}}`;
}

/** The error envelope; the interface does not publish one, so it mirrors the success envelope's fields. */
export function errorBody(status: number, message: string): string {
  return JSON.stringify({ code: status, status: 'error', message });
}

/** Ends the response with a JSON body and its length, so keep-alive clients know where it stops. */
export function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

/** Shorthand for an error envelope with a matching status. */
export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, errorBody(status, message), headers);
}
