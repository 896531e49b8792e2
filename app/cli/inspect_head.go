package cli

import (
	"fmt"

	"easel/engine/cmf"
	"easel/engine/qwen3vl"
)

// languageHeadText says whether the file can write text (describe, expand, --check): the final
// norm te.norm.weight and te.lm_head.weight, or the embedding when the checkpoint ties them.
func languageHeadText(f *cmf.File) string {
	info, err := qwen3vl.DescribeHead(f)
	switch {
	case err != nil:
		return fmt.Sprintf("unreadable (%v)", err)
	case !info.Present:
		return "absent: " + qwen3vl.NoHeadAdvice(info)
	case info.Tied:
		return "te.norm.weight + the token embedding (tied): can write text"
	}
	return fmt.Sprintf("te.norm.weight + te.lm_head.weight %s, %s: can write text", info.DType, sizeText(uint64(info.Bytes)))
}
