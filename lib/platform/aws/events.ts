// The EventBridge client for the given settings, built once per container.
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const eventBridgeClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'events_endpoint'>): EventBridgeClient =>
    captureClient(new EventBridgeClient(clientOptions('events', aws.region, aws.events_endpoint))),
);
