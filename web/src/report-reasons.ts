// The reasons a report may give (the API's `reason`, docs/MODERATION.md "Reports") as the console words them.
export const REASONS = {
  sexual: 'Sexual content',
  violence: 'Violence or gore',
  hate: 'Hate or harassment',
  illegal: 'Illegal content',
  copyright: 'Copyright infringement',
  spam: 'Spam or scam',
  other: 'Something else',
} as const;
