// The back office's review queue (docs/MODERATION.md "The queue"): files held or flagged by the classifier,
// or reported, oldest first, each with its picture (a held one's through the content route), owner, state,
// score, top labels and newest reports; approve, take down, or take down and disable the uploader (the
// takedowns asked again first). A reviewed file leaves the list and a notice says what was done.
import { useState } from 'preact/hooks';
import { api, call, type DataOf } from '../api/client.ts';
import { Thumbnail } from '../file-links.tsx';
import { REASONS } from '../report-reasons.ts';
import { CardGrid, errorText, FormError, formatTime, Page, Status, usePages } from '../ui.tsx';

type Entry = DataOf<'/api/v1/admin/moderation', 'get'>['items'][number];
type Review = 'approve' | 'take_down' | 'take_down_and_disable';
type Outcome = DataOf<'/api/v1/admin/moderation/{id}', 'post'>;

const STATES = { held: 'Held', flagged: 'Flagged', published: 'Published' } as const;
const REPORTS_SHOWN = 3;
const LABELS_SHOWN = 3;

const percent = (score: number) => `${Math.round(score * 100)} %`;

/** What a review did, in a sentence. */
function outcomeText(name: string, outcome: Outcome): string {
  if (outcome.action === 'approve') return `Approved: ${name} is published`;
  const likeness = outcome.blocked
    ? 'its likeness is now refused at upload'
    : 'its likeness could not be listed (too plain an image), so copies are not refused';
  const owner =
    outcome.action === 'take_down_and_disable'
      ? outcome.owner_disabled
        ? '; its uploader is disabled'
        : '; its uploader was not disabled (an administrator)'
      : '';
  return `Taken down: ${name}; ${likeness}${owner}`;
}

export function AdminModeration() {
  const queue = usePages((cursor) =>
    call(
      api.GET('/api/v1/admin/moderation', {
        params: { query: { limit: '20', ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  const [reviewed, setReviewed] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState('');
  const items = queue.items.filter((entry) => !reviewed.has(entry.file.id));
  const done = (id: string, message: string) => {
    setReviewed((current) => new Set(current).add(id));
    setNotice(message);
  };
  return (
    <Page title="Review queue">
      <p>
        Files the classifier held or flagged, and files someone reported, oldest first. A held file is shown
        to nobody but its owner and administrators until it is approved.
      </p>
      {notice && <Status message={notice} />}
      <CardGrid
        list={{ ...queue, items }}
        label="Files to review"
        empty="Nothing waits for review."
        className="queue"
      >
        {(entry) => <QueueEntry key={entry.file.id} entry={entry} onDone={done} />}
      </CardGrid>
    </Page>
  );
}

function QueueEntry({ entry, onDone }: { entry: Entry; onDone: (id: string, message: string) => void }) {
  const { file } = entry;
  const name = file.original_name;
  const [confirming, setConfirming] = useState<Review | null>(null);
  const [error, setError] = useState('');
  const review = async (action: Review) => {
    setError('');
    try {
      const body = { action };
      const outcome = await call(
        api.POST('/api/v1/admin/moderation/{id}', { params: { path: { id: file.id } }, body }),
      );
      onDone(file.id, outcomeText(name, outcome));
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const moderation = file.moderation;
  const labels = [...(moderation?.labels ?? [])].sort((a, b) => b.score - a.score).slice(0, LABELS_SHOWN);
  const reports = entry.report_count;
  return (
    <li class="card queue-entry">
      <Thumbnail file={file} />
      <div>
        <h2 class="name">{name}</h2>
        <p>
          <span class={`badge badge-${moderation?.state ?? 'none'}`}>
            {moderation ? STATES[moderation.state] : 'Not classified yet'}
          </span>{' '}
          {moderation?.score != null && <>Score {percent(moderation.score)}</>}
          {labels.length > 0 && (
            <> · {labels.map((label) => `${label.name} ${percent(label.score)}`).join(', ')}</>
          )}
        </p>
        {moderation?.error && <p>The classifier failed: {moderation.error}</p>}
        <p class="meta">
          Owner <a href={`#/admin/files?owner_id=${encodeURIComponent(file.owner_id)}`}>{file.owner_id}</a> ·
          uploaded {formatTime(file.created_at)} · queued {formatTime(entry.queued_at)}
        </p>
        <p>{reports === 0 ? 'No reports.' : `${reports} ${reports === 1 ? 'report' : 'reports'}:`}</p>
        {entry.reports.length > 0 && (
          <ul class="queue-reports">
            {entry.reports.slice(0, REPORTS_SHOWN).map((report, index) => (
              <li key={index}>
                {REASONS[report.reason]}
                {report.note ? `: “${report.note}”` : ''} ({formatTime(report.created_at)})
              </li>
            ))}
          </ul>
        )}
        <div class="actions confirm">
          {confirming ? (
            <>
              <span>
                {confirming === 'take_down'
                  ? `Take down ${name} for good?`
                  : `Take down ${name} and disable its uploader?`}
              </span>
              <button type="button" class="danger" onClick={() => review(confirming)}>
                Yes, take it down
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                Cancel
              </button>
            </>
          ) : (
            <>
              <button type="button" onClick={() => review('approve')}>
                Approve<span class="visually-hidden"> {name}</span>
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming('take_down')}>
                Take down<span class="visually-hidden"> {name}</span>…
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming('take_down_and_disable')}>
                Take down and disable uploader<span class="visually-hidden"> of {name}</span>…
              </button>
            </>
          )}
        </div>
        {error && <FormError message={error} />}
      </div>
    </li>
  );
}
