package convert

// The published Qwen-Image-2.1 configs (qi21-spec.md §5.1, §6.1, §8.1, §10.1, §3.2): the files of
// the official snapshot as far as the specification knows them, the synthetic model's configs.
// The transformer, VAE and scheduler files are the class defaults the reference fixtures show;
// the text encoder is Qwen3-VL-8B's; the image processor has the stock Qwen3-VL pixel bounds.

// PublishedConfigs are the published snapshot's small files, by path in the snapshot.
func PublishedConfigs() map[string][]byte {
	return map[string][]byte{
		"model_index.json":                []byte(`{"_class_name": "QwenImage21Pipeline"}`),
		"transformer/config.json":         []byte(publishedTransformer),
		"text_encoder/config.json":        []byte(publishedTextEncoder),
		"vae/config.json":                 []byte(publishedVAE),
		"scheduler/scheduler_config.json": []byte(publishedScheduler),
		"processor/processor_config.json": []byte(publishedProcessor),
	}
}

const publishedTransformer = `{
  "_class_name": "QwenImage21Transformer2DModel",
  "_diffusers_version": "0.40.0.dev0",
  "attention_head_dim": 128,
  "axes_dims_rope": [
    16,
    56,
    56
  ],
  "causal_condition": true,
  "context_in_dim": 4096,
  "eps": 1e-06,
  "in_channels": 64,
  "mlp_ratio": 3,
  "num_attention_heads": 32,
  "num_layers": 32,
  "out_channels": 64,
  "patch_size": 1
}
`

const publishedTextEncoder = `{
  "image_token_id": 151655,
  "model_type": "qwen3_vl",
  "text_config": {
    "attention_bias": false,
    "attention_dropout": 0.0,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 12288,
    "max_position_embeddings": 262144,
    "model_type": "qwen3_vl_text",
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "pad_token_id": null,
    "rms_norm_eps": 1e-06,
    "rope_parameters": {
      "mrope_interleaved": true,
      "mrope_section": [
        24,
        20,
        20
      ],
      "rope_theta": 5000000.0,
      "rope_type": "default"
    },
    "tie_word_embeddings": false,
    "use_cache": true,
    "vocab_size": 151936
  },
  "tie_word_embeddings": false,
  "transformers_version": "5.17.0",
  "video_token_id": 151656,
  "vision_config": {
    "deepstack_visual_indexes": [
      8,
      16,
      24
    ],
    "depth": 27,
    "hidden_act": "gelu_pytorch_tanh",
    "hidden_size": 1152,
    "in_channels": 3,
    "initializer_range": 0.02,
    "intermediate_size": 4304,
    "model_type": "qwen3_vl_vision",
    "num_heads": 16,
    "num_position_embeddings": 2304,
    "out_hidden_size": 4096,
    "patch_size": 16,
    "rope_parameters": {
      "rope_theta": 10000.0,
      "rope_type": "axial"
    },
    "spatial_merge_size": 2,
    "temporal_patch_size": 2
  },
  "vision_end_token_id": 151653,
  "vision_start_token_id": 151652
}
`

const publishedVAE = `{
  "_class_name": "AutoencoderKLQwenImage21",
  "_diffusers_version": "0.40.0.dev0",
  "attn_scales": [],
  "base_dim": 96,
  "decoder_base_dim": 144,
  "dim_mult": [
    1,
    2,
    4,
    8,
    8
  ],
  "dropout": 0.0,
  "in_channels": 4,
  "is_residual": true,
  "latents_mean": [
    0.5126,
    0.7721,
    -0.0631,
    1.3506,
    -0.7855,
    -2.1025,
    -0.3458,
    1.3722,
    1.8873,
    -1.7177,
    -0.651,
    0.2732,
    0.7562,
    -0.6163,
    -1.0277,
    3.8363,
    2.021,
    0.0472,
    0.932,
    2.0087,
    2.4954,
    -0.1391,
    -1.4249,
    1.8464,
    -0.5236,
    1.2826,
    3.7046,
    -1.3035,
    2.7286,
    -1.4518,
    -1.9036,
    -1.9955,
    -0.0342,
    -1.0265,
    -0.7636,
    3.0555,
    0.0746,
    -3.0751,
    -0.1076,
    1.7376,
    -1.0914,
    -1.9435,
    -0.2784,
    -1.368,
    0.4809,
    -0.4433,
    0.3764,
    0.5729,
    -2.0595,
    1.096,
    -1.326,
    -2.0211,
    -5.0179,
    0.5275,
    4.0162,
    1.8505,
    0.3026,
    1.9373,
    1.4937,
    0.2632,
    0.5547,
    -1.7121,
    -0.1562,
    0.0304
  ],
  "latents_std": [
    3.2001,
    3.2936,
    3.4321,
    3.0091,
    3.1061,
    4.0379,
    4.0705,
    3.791,
    3.0785,
    3.65,
    3.9308,
    3.0904,
    2.8778,
    3.7675,
    3.732,
    5.0756,
    3.2864,
    4.0397,
    3.1317,
    4.0443,
    2.9249,
    3.9454,
    3.0988,
    4.2489,
    3.4896,
    3.8513,
    3.9323,
    3.4719,
    3.7498,
    4.283,
    3.5694,
    4.2467,
    3.9037,
    3.2947,
    5.077,
    3.5075,
    3.27,
    3.4767,
    2.8063,
    5.1125,
    3.5327,
    4.7833,
    3.1286,
    4.1819,
    3.8527,
    3.8312,
    3.5605,
    4.3875,
    3.9624,
    4.0168,
    3.5643,
    4.055,
    5.5614,
    4.2963,
    4.408,
    3.4959,
    3.8747,
    3.7608,
    3.5735,
    3.149,
    3.7662,
    3.6746,
    3.4563,
    3.8161
  ],
  "num_res_blocks": 2,
  "out_channels": 4,
  "patch_size": null,
  "scale_factor_spatial": 16,
  "scale_factor_temporal": 8,
  "temperal_downsample": [
    false,
    true,
    true,
    true
  ],
  "z_dim": 64
}
`

const publishedScheduler = `{
  "_class_name": "FlowMatchEulerDiscreteScheduler",
  "_diffusers_version": "0.40.0.dev0",
  "base_image_seq_len": 256,
  "base_shift": 0.5,
  "invert_sigmas": false,
  "max_image_seq_len": 8192,
  "max_shift": 0.9,
  "num_train_timesteps": 1000,
  "shift": 1.0,
  "shift_terminal": 0.02,
  "stochastic_sampling": false,
  "time_shift_type": "exponential",
  "use_beta_sigmas": false,
  "use_dynamic_shifting": true,
  "use_exponential_sigmas": false,
  "use_karras_sigmas": false
}
`

const publishedProcessor = `{
  "image_processor": {
    "do_convert_rgb": true,
    "do_normalize": true,
    "do_rescale": true,
    "do_resize": true,
    "image_mean": [
      0.5,
      0.5,
      0.5
    ],
    "image_processor_type": "Qwen2VLImageProcessor",
    "image_std": [
      0.5,
      0.5,
      0.5
    ],
    "merge_size": 2,
    "patch_size": 16,
    "resample": 3,
    "rescale_factor": 0.00392156862745098,
    "size": {
      "longest_edge": 16777216,
      "shortest_edge": 65536
    },
    "temporal_patch_size": 2
  },
  "processor_class": "Qwen3VLProcessor",
  "video_processor": {
    "do_convert_rgb": true,
    "do_normalize": true,
    "do_rescale": true,
    "do_resize": true,
    "do_sample_frames": true,
    "fps": 2,
    "image_mean": [
      0.5,
      0.5,
      0.5
    ],
    "image_std": [
      0.5,
      0.5,
      0.5
    ],
    "max_frames": 768,
    "max_video_tokens": 768,
    "merge_size": 2,
    "min_frames": 4,
    "patch_size": 16,
    "resample": 3,
    "rescale_factor": 0.00392156862745098,
    "return_metadata": false,
    "size": {
      "longest_edge": 786432,
      "shortest_edge": 131072
    },
    "temporal_patch_size": 2,
    "video_processor_type": "Qwen3VLVideoProcessor"
  }
}
`
