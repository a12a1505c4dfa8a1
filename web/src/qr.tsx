// A QR code drawn as SVG from text (an otpauth URI, a channel's payment code). uqr loads on first use, so
// the initial bundle does not carry it; the SVG is built as elements, no markup string, no data: URL.
import { useEffect, useState } from 'preact/hooks';

export function QrCode({ text, label }: { text: string; label: string }) {
  const [modules, setModules] = useState<boolean[][] | null>(null);
  useEffect(() => {
    let live = true;
    void import('uqr').then(({ encode }) => {
      if (live) setModules(encode(text, { border: 2 }).data);
    });
    return () => {
      live = false;
    };
  }, [text]);
  if (!modules) return <p>Drawing the QR code…</p>;
  const size = modules.length;
  const path = modules.flatMap((row, y) => row.map((dark, x) => (dark ? `M${x} ${y}h1v1h-1z` : ''))).join('');
  return (
    <svg
      class="qr"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${size} ${size}`}
      width={200}
      height={200}
      shape-rendering="crispEdges"
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
