# Embeds WGSL files into the binary at build time as raw string literals, so shaders live in real
# .wgsl files (editor support, reviewable diffs) and the binary needs no files at run time.
# onda_embed_wgsl(OUT_CPP ROOT_DIR FILES...) writes OUT_CPP defining
#   onda::kernels::embedded_shaders(): name (path relative to ROOT_DIR) -> text.
set(ONDA_EMBED_WGSL_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/EmbedWgslScript.cmake")

function(onda_embed_wgsl out_cpp root_dir)
  add_custom_command(
    OUTPUT "${out_cpp}"
    COMMAND "${CMAKE_COMMAND}" -DOUT=${out_cpp} -DROOT=${root_dir} "-DFILES=${ARGN}"
            -P "${ONDA_EMBED_WGSL_SCRIPT}"
    DEPENDS ${ARGN} "${ONDA_EMBED_WGSL_SCRIPT}"
    COMMENT "Embedding WGSL shaders"
    VERBATIM)
endfunction()
