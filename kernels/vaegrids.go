package kernels

import "easel/kernels/device"

// Dispatch shapes of vae.metal's kernels (the threadgroup sizes are fixed by the kernel code).

// ConvGrid is vae_conv's dispatch for pixels output pixels and oc output channels.
func ConvGrid(pixels, oc int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(pixels, 64), Height: ceilDiv(oc, 64), Depth: 1}, size1(128)
}

// ElementGrid is the dispatch of vae_chnorm (n pixels), vae_elt (n elements), vae_shuffle and vae_upsample
// (n output elements): one thread each.
func ElementGrid(n int) (groups, threads device.Size) { return size1(ceilDiv(n, 256)), size1(256) }

// TransposeGrid is vae_transpose's dispatch for x [rows, cols].
func TransposeGrid(rows, cols int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(cols, 32), Height: ceilDiv(rows, 32), Depth: 1}, device.Size{Width: 32, Height: 8, Depth: 1}
}

// LinearGrid is ops_linear's dispatch for n rows and out features.
func LinearGrid(n, out int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(n, 64), Height: ceilDiv(out, 64), Depth: 1}, size1(128)
}

// BatchGrid is ops_mm's dispatch for batch m×n outputs.
func BatchGrid(m, n, batch int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(n, 64), Height: ceilDiv(m, 64), Depth: batch}, size1(128)
}

// RowGrid is the dispatch of ops_softmax and ops_rownorm over rows rows.
func RowGrid(rows int) (groups, threads device.Size) { return size1(rows), size1(256) }

// HeadGrid is ops_headrope's dispatch for rows × heads heads.
func HeadGrid(rows, heads int) (groups, threads device.Size) {
	return size1(ceilDiv(rows*heads, 64)), size1(64)
}

// FloatAmaxGrid is vae_amax's dispatch over n floats: up to 256 groups of 256 threads striding over them.
func FloatAmaxGrid(n int) (groups, threads device.Size) {
	return size1(max(1, min(256, ceilDiv(n, 256)))), size1(256)
}
