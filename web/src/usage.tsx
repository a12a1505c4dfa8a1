// The account's usage against its quota, with its plan, and the bytes served this month against the
// month's bandwidth (My files, Plans and usage; docs/UPLOADS.md "Bandwidth").
import { api, call } from './api/client.ts';
import { FormError, formatBytes, formatTime, useLoad } from './ui.tsx';

export function Usage() {
  const usage = useLoad(() => call(api.GET('/api/v1/usage')));
  if (usage.error) return <FormError message={usage.error} />;
  // Until it answers, the block holds its place (two lines and two bars), so the page below it does not jump
  // when it arrives (a layout shift Lighthouse counts against My files).
  if (!usage.data)
    return (
      <div class="usage" aria-hidden="true">
        <p>&nbsp;</p>
        <progress max={1} value={0} />
        <p>&nbsp;</p>
        <progress max={1} value={0} />
      </div>
    );
  const { used_bytes, quota_bytes, file_count, plan, bandwidth_bytes_used, bandwidth_bytes } = usage.data;
  return (
    <div class="usage">
      <p id="usage-text">
        {formatBytes(used_bytes)} of {formatBytes(quota_bytes)} used in {file_count} files
        {plan ? ` · plan ${plan.name}${plan.expires_at ? ` until ${formatTime(plan.expires_at)}` : ''}` : ''}
      </p>
      {quota_bytes !== null && (
        <progress
          aria-labelledby="usage-text"
          max={quota_bytes || 1}
          value={Math.min(used_bytes, quota_bytes)}
        />
      )}
      <p id="bandwidth-text">
        {formatBytes(bandwidth_bytes_used)} of {formatBytes(bandwidth_bytes)} served this month
      </p>
      {bandwidth_bytes !== null && (
        <progress
          aria-labelledby="bandwidth-text"
          max={bandwidth_bytes || 1}
          value={Math.min(bandwidth_bytes_used, bandwidth_bytes)}
        />
      )}
    </div>
  );
}
