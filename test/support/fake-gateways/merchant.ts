// The merchant identities our side and the fake gateways agree on, for every test that configures channels.
export const A_APP_ID = '2021000000000000';
export const B_MCH_ID = '1230000109';
export const B_API_V3_KEY = '0123456789abcdef0123456789abcdef';
export const B_PLATFORM_SERIAL = 'PUB_KEY_ID_0112340000000000000000000000000000';
export const C_PID = '1001';
export const C_KEY = 'epay-merchant-key-abc123';
