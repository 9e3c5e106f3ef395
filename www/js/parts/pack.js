// A scenario's source packed for a link or an attribute: deflate-raw
// (CompressionStream) and base64url, and back, with the unpacked text bounded
// as the engine bounds a source (a link cannot make the page inflate gigabytes).

// The most bytes a scenario source may have (the engine's bound).
export const MAX_SOURCE_BYTES = 256 * 1024;

function toBase64url(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('the packed source is not base64url');
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// The source, packed.
export async function pack(source) {
  const stream = new Blob([source]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return toBase64url(new Uint8Array(await new Response(stream).arrayBuffer()));
}

// The source a packed text holds; an Error if it is not one, or unpacks
// to more than MAX_SOURCE_BYTES.
export async function unpack(text) {
  const stream = new Blob([fromBase64url(text)]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  const reader = stream.getReader();
  const chunks = [];
  let size = 0;
  let tooBig = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_SOURCE_BYTES) {
        tooBig = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
    }
  } catch {
    throw new Error('the packed source is damaged (it does not inflate)');
  }
  if (tooBig) throw new Error(`the packed source unpacks to more than ${MAX_SOURCE_BYTES} bytes`);
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}
