"""shipit: upload build artefacts, in chunks, with retries."""
