mod replay;
