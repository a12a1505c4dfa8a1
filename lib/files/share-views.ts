// What the share service answers: a share link as its owner lists it, and an open share's items.

export interface ShareView {
  id: string;
  url: string;
  file_id: string | null;
  album_id: string | null;
  /** The shared file's name or the album's; null once it is gone. */
  name: string | null;
  has_password: boolean;
  expires_at: string | null;
  max_views: number | null;
  views: number;
  created_at: string;
}

export interface ShareItemView {
  url: string;
  thumbnail: string | null;
  original_name: string;
  mime_type: string;
  size: number;
  width: number;
  height: number;
}

export interface OpenedShare {
  share: {
    id: string;
    has_password: boolean;
    expires_at: string | null;
    max_views: number | null;
    views: number;
  };
  album: { name: string; description: string } | null;
  items: ShareItemView[];
}
