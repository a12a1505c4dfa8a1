// A file's tags in its lightbox (docs/UPLOADS.md "Tags and search"): each a chip with a button removing
// it, and a field adding more (comma-separated); every change replaces the file's tags at once.
import { useId, useState } from 'preact/hooks';
import { useAction } from './action.tsx';
import { api, call } from './api/client.ts';
import type { GridFile } from './file-links.tsx';

export function TagEditor({ file, onChanged }: { file: GridFile; onChanged: () => unknown }) {
  const id = useId();
  const [typed, setTyped] = useState('');
  const action = useAction(onChanged);
  const save = (tags: string[], done: string) =>
    action.run(
      () => call(api.PUT('/api/v1/files/{id}/tags', { params: { path: { id: file.id } }, body: { tags } })),
      done,
    );
  return (
    <div class="field tags">
      <ul class="chips" aria-label="Tags">
        {file.tags.map((tag) => (
          <li key={tag} class="chip">
            {tag}
            <button
              type="button"
              class="link"
              aria-label={`Remove tag ${tag}`}
              onClick={() =>
                save(
                  file.tags.filter((other) => other !== tag),
                  `Tag ${tag} removed`,
                )
              }
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void save([...file.tags, ...typed.split(',')], 'Tags saved').then(() => setTyped(''));
        }}
      >
        <label for={`${id}-tag`}>Add tags</label>
        <input
          id={`${id}-tag`}
          maxLength={200}
          value={typed}
          placeholder="cats, summer"
          onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
        />
        <button type="submit" class="secondary">
          Add
        </button>
      </form>
      {action.view}
    </div>
  );
}
