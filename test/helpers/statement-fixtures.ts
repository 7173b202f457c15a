// Statement texts several test files share.

/** The KWD statement of the issue: three decimals, entries 1.010 in and 0.125 out. */
export const KWD_MT940 = [
  ':20:KWD-1',
  ':25:KW81CBKU0000000000001234560101',
  ':28C:1/1',
  ':60F:C261128KWD1000,880',
  ':61:2611281128C1,010NTRFIN-1//B1',
  ':86:in',
  ':61:2611281128D0,125NCHGFEE-1//B2',
  ':86:fee',
  ':62F:C261128KWD1001,765',
  '',
].join('\r\n');
