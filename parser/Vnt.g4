grammar Vnt;
program : EOF ;
WS : [ \t\r\n]+ -> skip ;
