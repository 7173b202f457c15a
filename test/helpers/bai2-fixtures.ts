// One account of a US bank on 26 November 2026, as banks write it: the 03 record continued by two
// 88s (available balances, then the summary of credits and debits), a wire in with a value date
// (its text holds a comma), a check paid whose text goes on in an 88, a fee without funds type.
// Account control total: 150000 + 142550 + 150000 + 140000 + 25000 + 32450 (03) + 25000 + 30000 + 2450 (16) = 697450.
export const BAI2_FILE = [
  '01,BANKUS33,ACME,261127,0600,7,80,,2/',
  '02,ACME,BANKUS33,1,261126,2400,USD,2/',
  '03,0975312468,USD,010,+150000,,,015,+142550,,/',
  '88,040,+150000,,,045,+140000,,/',
  '88,100,25000,1,,400,32450,2,/',
  '16,195,25000,V,261125,,WIRE123,INV-77,WIRE FROM ACME CORP, REF 77/',
  '16,475,30000,0,CHK1001,,CHECK PAID/',
  '88,NUMBER 1001',
  '16,699,2450,,FEE9,,ACCOUNT FEES/',
  '49,697450,8/',
  '98,697450,1,10/',
  '99,697450,1,12/',
  '',
].join('\n');
