// Public surface of the channel wire-protocol adapters used by the payments service.

export type { ChannelASettings } from './channel-a.ts';
export { createChannelA } from './channel-a.ts';
export type { ChannelBSettings } from './channel-b.ts';
export { createChannelB } from './channel-b.ts';
export type { ChannelCSettings } from './channel-c.ts';
export { createChannelC, signEpayParams } from './channel-c.ts';
export { ChannelConfigError, ChannelRequestError } from './errors.ts';
export { centsToYuan, InvalidAmountError, yuanToCents } from './money.ts';
export type {
  CallbackReply,
  CallbackRequest,
  CallbackVerdict,
  ChannelAdapter,
  ChannelOrder,
  ChannelProvider,
  CreateChannelOrderInput,
  QueryFailureReason,
  QueryVerdict,
  SynchronousChannelAdapter,
} from './types.ts';
