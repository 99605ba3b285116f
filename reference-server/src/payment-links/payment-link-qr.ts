import QRCode from 'qrcode';

/**
 * The QR code of a payment link's `url` as an SVG document, drawn by the `qrcode` package (error correction
 * `M`: a printed code still reads with a crease or a smudge). The same bytes for the same URL, so the answer
 * can carry an ETag; dark on white with a quiet zone of four modules, as scanners expect.
 *
 * @example
 * const svg = await paymentLinkQrSvg('https://js.test.example/links/pl_…'); // '<svg xmlns=…'
 */
export async function paymentLinkQrSvg(url: string): Promise<string> {
  const svg = await QRCode.toString(url, {
    type: 'svg',
    errorCorrectionLevel: 'M',
    margin: 4,
    color: { dark: '#000000', light: '#ffffff' },
  });
  // An accessible name for the image when it is opened or embedded by itself.
  return svg.replace('<svg ', '<svg role="img" aria-label="QR code of the payment link" ');
}
