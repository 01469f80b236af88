"""Generated wire code of the sixnimmt protocol (``make proto`` writes ``sixnimmt/v1``)."""
