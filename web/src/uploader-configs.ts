// Ready configurations for uploader tools (docs/ALBUMS.md "Uploader configurations"), built from the
// service's address and a new API token: PicGo's web-uploader, a ShareX custom uploader (.sxcu), and a
// Flameshot or curl command. Pure, so the console and the tests build exactly the same text.

/** PicGo's configuration for its web-uploader plugin, pointed at this service with the token. */
export function picgoConfig(token: string, origin: string): string {
  return JSON.stringify(
    {
      picBed: {
        uploader: 'web-uploader',
        current: 'web-uploader',
        'web-uploader': {
          url: `${origin}/api/v1/upload`,
          paramName: 'file',
          jsonPath: 'data.url',
          customHeader: JSON.stringify({ Authorization: `Bearer ${token}` }),
          customBody: '',
        },
      },
      picgoPlugins: { 'picgo-plugin-web-uploader': true },
    },
    null,
    2,
  );
}

/** The fields of a ShareX custom uploader this service needs (ShareX reads the .sxcu file as this JSON). */
export interface SharexUploader {
  Version: string;
  Name: string;
  DestinationType: string;
  RequestMethod: 'POST';
  RequestURL: string;
  Headers: Record<string, string>;
  Body: 'MultipartFormData';
  Arguments?: Record<string, string>;
  FileFormName: string;
  URL: string;
  ThumbnailURL: string;
  DeletionURL: string;
  ErrorMessage: string;
}

/**
 * A ShareX custom uploader (.sxcu): a multipart POST of `file` with the token, the link read from the
 * answer's `data.url` ({json:...} is ShareX's syntax for a field of a JSON answer). ShareX opens a deletion
 * URL in the browser, which cannot send the token: it opens the console's page that deletes that file after
 * one confirmation, where the owner is signed in.
 */
export function sharexConfig(
  token: string,
  origin: string,
  options: { albumId?: string; siteName?: string } = {},
): SharexUploader {
  const host = new URL(origin).host;
  return {
    Version: '15.0.0',
    // The site's name (docs/DEPLOYMENT.md "Branding"), as ShareX lists its uploaders.
    Name: options.siteName ?? `${host} image host`,
    DestinationType: 'ImageUploader, FileUploader',
    RequestMethod: 'POST',
    RequestURL: `${origin}/api/v1/upload`,
    Headers: { Authorization: `Bearer ${token}` },
    Body: 'MultipartFormData',
    ...(options.albumId ? { Arguments: { album_id: options.albumId } } : {}),
    FileFormName: 'file',
    URL: '{json:data.url}',
    ThumbnailURL: '{json:data.thumbnail}',
    DeletionURL: `${origin}/#/files/{json:data.id}/delete`,
    ErrorMessage: '{json:message}',
  };
}

/** The .sxcu file's text and name (ShareX imports it by opening the file), named after the site when given. */
export function sharexFile(token: string, origin: string, siteName?: string): { name: string; text: string } {
  const name = (siteName ?? new URL(origin).host).replace(/[^A-Za-z0-9.-]+/g, '_');
  return {
    name: `${name}.sxcu`,
    text: JSON.stringify(sharexConfig(token, origin, siteName ? { siteName } : {}), null, 2),
  };
}

const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** Uploads one file with curl and prints its link (jq reads `data.url`). */
export function curlCommand(token: string, origin: string): string {
  return [
    `curl -sS -H ${quoted(`Authorization: Bearer ${token}`)}`,
    `-F 'file=@picture.png'`,
    `${quoted(`${origin}/api/v1/upload`)} | jq -r .data.url`,
  ].join(' ');
}

/** A Flameshot capture piped straight into an upload; the link is printed (and copied, with xclip). */
export function flameshotCommand(token: string, origin: string): string {
  return [
    'flameshot gui --raw |',
    `curl -sS -H ${quoted(`Authorization: Bearer ${token}`)}`,
    `-F 'file=@-;filename=screenshot.png;type=image/png'`,
    `${quoted(`${origin}/api/v1/upload`)} | jq -r .data.url | tee /dev/stderr | xclip -selection clipboard`,
  ].join(' ');
}

/** Deletes a file by its id with the same token (clients that sync deletions, such as PicGo's, do this). */
export function curlDeleteCommand(token: string, origin: string): string {
  return `curl -sS -X DELETE -H ${quoted(`Authorization: Bearer ${token}`)} ${quoted(`${origin}/api/v1/files/<id>`)}`;
}
