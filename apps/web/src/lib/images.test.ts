import { describe, expect, it } from 'vitest';
import { iconSize, imageAttributes } from './images';

const service = (w: number, q: number) => `/img/logo.png?w=${w}&q=${q}`;

describe('images (spec section 9)', () => {
  it('rounds an icon up to the icon sizes 16 to 384', () => {
    expect([1, 16, 17, 20, 32, 33, 100, 384, 500].map(iconSize)).toEqual([
      16, 16, 32, 32, 32, 48, 128, 384, 384,
    ]);
  });

  it('always gives width, height and lazy loading; a srcset only when an image service can resize', () => {
    expect(imageAttributes({ src: '/logo.svg', width: 32, height: 32 })).toEqual({
      src: '/logo.svg',
      width: 32,
      height: 32,
      loading: 'lazy',
      decoding: 'async',
    });
    expect(imageAttributes({ src: '/a.png', width: 10, height: 10, eager: true }).loading).toBe('eager');
  });

  it('offers a fixed-size image at its size and twice it, rounded to the spec sizes, at quality 75', () => {
    const img = imageAttributes({ src: '/logo.png', width: 40, height: 40, urlFor: service });
    expect(img.srcSet).toBe('/img/logo.png?w=48&q=75 48w, /img/logo.png?w=96&q=75 96w');
    expect(img.sizes).toBe('40px');
    expect(img.src).toBe('/img/logo.png?w=96&q=75');
    const wide = imageAttributes({ src: '/hero.png', width: 700, height: 300, urlFor: service, quality: 60 });
    expect(wide.srcSet).toBe('/img/logo.png?w=750&q=60 750w, /img/logo.png?w=1920&q=60 1920w');
  });

  it('offers a responsive image (sizes given) at every image width', () => {
    const img = imageAttributes({
      src: '/hero.png',
      width: 1200,
      height: 600,
      sizes: '100vw',
      urlFor: service,
    });
    expect(img.srcSet?.split(', ').map((s) => s.split(' ')[1])).toEqual([
      '640w',
      '750w',
      '828w',
      '1080w',
      '1200w',
      '1920w',
      '2048w',
      '3840w',
    ]);
    expect(img.sizes).toBe('100vw');
  });
});
