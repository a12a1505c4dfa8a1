// The SES client for the given settings, built once per container (mail.ses_region may differ from aws.region).
import { SESClient } from '@aws-sdk/client-ses';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const sesClient = /* @__PURE__ */ memoByEndpoint(
  (options: { region: string; endpoint?: string | undefined }): SESClient =>
    captureClient(new SESClient(clientOptions('ses', options.region, options.endpoint, 2))),
);
