import { DEFAULT_IMAGE_QUALITY, ICON_SIZES, type IconSize, IMAGE_WIDTHS } from '@lockstep/contract';

/** The icon size of spec section 9 for a wanted size: the smallest that is at least as big (at most 384). */
export function iconSize(wanted: number): IconSize {
  return ICON_SIZES.find((size) => size >= wanted) ?? ICON_SIZES[ICON_SIZES.length - 1] ?? 384;
}

/** Every size of spec section 9, icons first, smallest first. */
const ALL_SIZES: readonly number[] = [...ICON_SIZES, ...IMAGE_WIDTHS];

/**
 * A fixed-size image needs its own width and twice it (high-density screens), each rounded up to a
 * size of the spec; a responsive one (sizes given) every width a screen may ask for.
 */
function fixedWidths(width: number): number[] {
  const up = (w: number) => ALL_SIZES.find((size) => size >= w) ?? 3840;
  return [...new Set([up(width), up(width * 2)])];
}

/** Builds the address of an image at a width and quality (an image service); none: the source as is. */
export type ImageUrlFor = (width: number, quality: number) => string;

export type ImageAttributes = {
  src: string;
  width: number;
  height: number;
  loading: 'lazy' | 'eager';
  decoding: 'async';
  srcSet?: string;
  sizes?: string;
};

/**
 * The attributes of an <img> (spec section 9): its width and height always (no layout shift), lazy
 * loading unless told otherwise, and, when an image service can resize it, a srcset over the
 * spec's widths (icon sizes for an image no wider than the largest icon) at the default quality 75.
 */
export function imageAttributes(options: {
  src: string;
  width: number;
  height: number;
  sizes?: string;
  urlFor?: ImageUrlFor;
  quality?: number;
  eager?: boolean;
}): ImageAttributes {
  const { src, width, height, sizes, urlFor, quality = DEFAULT_IMAGE_QUALITY, eager = false } = options;
  const attributes: ImageAttributes = {
    src,
    width,
    height,
    loading: eager ? 'eager' : 'lazy',
    decoding: 'async',
  };
  if (!urlFor) return attributes;
  const widths = sizes ? [...IMAGE_WIDTHS] : fixedWidths(width);
  attributes.src = urlFor(widths[widths.length - 1] ?? width, quality);
  attributes.srcSet = widths.map((w) => `${urlFor(w, quality)} ${w}w`).join(', ');
  attributes.sizes = sizes ?? `${width}px`;
  return attributes;
}
