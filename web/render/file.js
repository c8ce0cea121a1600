// toolwire-render, file: Files: audio and video players with their captions, else a download card.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { bytes, clockOf, downloadUrl, essence, h, inlineOrStoredSize, sourceUrl } from './util.js';

export function file(el, data, mime, opts) {
  const type = essence(mime);
  const src = sourceUrl(data.source, type, opts);
  const name = String(data.filename || 'file');
  if (src && (data.mediaKind === 'audio' || data.mediaKind === 'video')) {
    const player = h(data.mediaKind, { class: `tw-${data.mediaKind}`, controls: true, preload: 'metadata', src });
    const size = inlineOrStoredSize(data.source);
    // Type, size and (once the metadata is in) duration and, for video, dimensions.
    const caption = h('figcaption', { class: 'tw-caption' }, [type, size === null ? '' : bytes(size)].filter(Boolean).join(' · '));
    player.addEventListener('loadedmetadata', () => {
      const parts = [];
      if (Number.isFinite(player.duration)) parts.push(clockOf(player.duration));
      if (player.videoWidth) parts.push(`${player.videoWidth}×${player.videoHeight} px`);
      caption.dataset.loaded = parts.join(' · ');
    });
    const save = h('a', { class: 'tw-save', href: src, download: name.replace(/[^\w.-]+/g, '_') }, 'Download');
    el.append(h('figure', { class: 'tw-figure tw-media' }, player, h('div', { class: 'tw-figure-bar' }, caption, save)));
    return data.mediaKind;
  }
  const href = src || downloadUrl(data.source);
  const size = data.source && typeof data.source.size === 'number' ? data.source.size : null;
  el.append(h('div', { class: 'tw-download' },
    h('span', { class: 'tw-file-name' }, name),
    h('span', { class: 'tw-muted' }, ` ${type || data.mediaKind || ''} ${size !== null ? bytes(size) : ''}`),
    href ? h('a', { href, download: name, rel: 'noopener' }, 'download') : h('span', { class: 'tw-muted' }, ' not stored')));
  return 'download';
}
